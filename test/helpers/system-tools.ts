/**
 * Why a test that drives a real system program cannot run here, or false (tap's `skip` option). `npm test` must pass
 * on a fresh Debian machine; these tests then skip with the install hint, and .ci/run installs the
 * packages so CI runs them.
 */
import { findOnPath } from '../../src/shared/find-on-path.js';

function missing(program: string, pkg: string): string | false {
  return findOnPath(program) === undefined ? `${program} is not installed (apt-get install ${pkg}; .ci/run does)` : false;
}

export const espeakMissing = (): string | false => missing('espeak-ng', 'espeak-ng');
export const aplayMissing = (): string | false => missing('aplay', 'alsa-utils');
export const fswebcamMissing = (): string | false => missing('fswebcam', 'fswebcam');
/** Playing speech needs both the synthesiser and the player. */
export const speechPlaybackMissing = (): string | false => espeakMissing() || aplayMissing();
export const arecordMissing = (): string | false => missing('arecord', 'alsa-utils');
/** The local wake word needs pocketsphinx with its English model; the tests make speech with espeak-ng and sox. */
export const keyphraseMissing = (): string | false =>
  missing('pocketsphinx_continuous', 'pocketsphinx pocketsphinx-en-us') || missing('sox', 'sox') || espeakMissing();
