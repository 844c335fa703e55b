/**
 * The error codes the voice pipeline throws: part of the one catalogue (src/shared/errors.ts composes
 * every such file through the generated src/shared/plugin-error-codes.ts), declared here so that the
 * folder holds everything about it. Plain data, importing nothing; codes are never reused.
 */
export const errorCodes = {
  HA_ERR_VOICE_WYOMING: 'a Wyoming speech server could not be reached, timed out, reported an error or answered with malformed events',
  HA_ERR_VOICE_TTS: 'speech synthesis failed (espeak-ng missing, refused the text, failed or timed out)',
  HA_ERR_VOICE_STT: 'speech recognition failed (the back end is not configured, unreachable, refused the audio, failed or timed out)',
  HA_ERR_VOICE_VAD: 'voice activity detection could not run (the Silero model is missing or altered, or its worker failed)',
  HA_ERR_VOICE_WAKE_WORD: 'the wake word models could not be loaded (directory, file names or input and output shapes)',
  HA_ERR_VOICE_KEYPHRASE:
    'the local wake word (pocketsphinx keyphrase spotting) cannot run: pocketsphinx_continuous or its English model is missing, the phrase has a word the dictionary lacks, or the program exited',
  HA_ERR_VOICE_OFFLINE_ONLY:
    'the local command recogniser heard no home command it knows and no open speech-to-text back end (plugin.voice.stt.fallback_backend) is configured',
  HA_ERR_VOICE_SATELLITE: 'a Wyoming satellite is not connected, refused the connection, or broke the protocol',
} as const;
