/**
 * English sentences of the assistant's own intents (issue 11): timers, time and date, small talk,
 * broadcast, shopping and to-do lists, media players, vacuums and weather. Device control lives
 * elsewhere; these are the intents that act on the assistant or on one kind of device.
 *
 * Slot naming (the recogniser turns these into Home Assistant's slots):
 *   {duration}                      the timer's length or the time added/removed, in seconds
 *   {duration:start_duration}       the length a running timer was started with, to pick it out
 *   {timer_name:name}               the timer's name ("pizza timer")
 *   {message:conversation_command}  the command a delayed timer runs ("in 5 minutes, open the door")
 *   {list_name:name}                the to-do list's name
 *   {volume:volume_level}           the volume to set
 */
import type { IntentSentences } from '../intent-sentences.js';

// A running timer as a sentence names it: by length, name, area, or just "my timer".
const TIMER =
  '[(my|the) ](timer|timers|{duration:start_duration} timer|{area} timer|{timer_name:name} timer|timer (for|of) {duration:start_duration}|timer (named|called|for) {timer_name:name}|timer in [the ]{area})';

// A media player named at the start or end of a command: "TV pause", "skip on the TV".
const ON_PLAYER = '[(on|in) [the ]({name}|{area})]';

const SKIP_FORWARD = '(next [(song|track|item)]|skip [(to [the ]next|this|the)] [(song|track|item)])';
const GO_BACK =
  '(replay|go back [to the (previous|last) (song|track|item)]|replay the (last|previous) (song|track|item)|play the (last|previous) (song|track|item) [again]|previous [(song|track|item)])';

// "play X on the TV in the kitchen": the player and the area are both optional.
const WHERE_TO_PLAY = '[on [the ]{name}] [in [the ]{area}]';

// Home Assistant's media classes and the words that ask for one ("play the Queen album").
const MEDIA_CLASSES: ReadonlyArray<readonly [string, string]> = [
  ['track', '(track|song)'],
  ['album', 'album'],
  ['artist', '(artist|band)'],
  ['playlist', 'playlist'],
  ['podcast', 'podcast'],
  ['movie', '(movie|film)'],
  ['tv_show', '(tv show|show|series)'],
];

const VOLUME_VERB = '(set|change|turn [(up|down)]|increase|decrease|raise|lower)';

const MEDIA_THING = '[(the|my) ](music|show|media|movie|song|tv|video)';

export const EN_ASSIST: IntentSentences[] = [
  {
    intent: 'HassStartTimer',
    language: 'en',
    templates: [
      '[(start|set|create|make) ][(a|an) ]{duration} timer [(named|called|for) {timer_name:name}]',
      '[(start|set|create|make) ][(a|an) ]timer (for|of) {duration} [(named|called) {timer_name:name}]',
      '(start|set|create|make) [(a|an) ]timer (named|called) {timer_name:name} for {duration}',
      '{message:conversation_command} in {duration}',
      'in {duration} {message:conversation_command}',
    ],
  },
  { intent: 'HassCancelTimer', language: 'en', templates: [`(cancel|stop|delete) ${TIMER}`] },
  {
    intent: 'HassCancelAllTimers',
    language: 'en',
    templates: ['(cancel|stop|delete) all [(my|the) ][{area} ]timers [in [the ]{area}]'],
  },
  { intent: 'HassPauseTimer', language: 'en', templates: [`(pause|hold) ${TIMER}`] },
  { intent: 'HassUnpauseTimer', language: 'en', templates: [`(resume|continue|unpause|restart) ${TIMER}`] },
  {
    intent: 'HassIncreaseTimer',
    language: 'en',
    templates: [`add {duration} to ${TIMER}`, `(increase|extend) ${TIMER} by {duration}`],
  },
  {
    intent: 'HassDecreaseTimer',
    language: 'en',
    templates: [`(remove|take|subtract) {duration} (from|off) ${TIMER}`, `(decrease|reduce|shorten) ${TIMER} by {duration}`],
  },
  {
    intent: 'HassTimerStatus',
    language: 'en',
    templates: [
      `${TIMER} status`,
      `status of ${TIMER}`,
      `[(how much|how long)] [time] [is] left on ${TIMER}`,
      `how (much time|long) [is] left [on ${TIMER}]`,
    ],
  },
  {
    intent: 'HassGetCurrentTime',
    language: 'en',
    templates: ['what time is it [(now|right now)]', '(whats|what is) the time [(now|right now)]', 'tell me the time'],
  },
  {
    intent: 'HassGetCurrentDate',
    language: 'en',
    templates: [
      '(whats|what is) [the ]date [today]',
      '(whats|what is) todays date',
      'tell me [(the|todays)] date',
      'what day is it [today]',
    ],
  },
  { intent: 'HassNevermind', language: 'en', templates: ['(nevermind|never mind|forget it|cancel that)'] },
  {
    intent: 'HassRespond',
    language: 'en',
    templates: [
      '(hi|hello|hey) [there] [home (assistant|agent)]',
      'are you always listening',
      'where does my data go',
      'what can i (say|ask [you])',
      'who (made|built|created) you',
    ],
  },
  {
    intent: 'HassBroadcast',
    language: 'en',
    templates: ['(broadcast|announce) [that] {message}', 'tell everyone [that] {message}'],
  },
  {
    intent: 'HassShoppingListAddItem',
    language: 'en',
    templates: ['(add|put) {item} (to|on) [(my|the) ]shopping list', '(add|put) {item} (to|on) (my|the) list'],
  },
  {
    intent: 'HassShoppingListCompleteItem',
    language: 'en',
    templates: [
      '(check off|cross off|complete|delete|remove) {item} (from|on|in|off) [(my|the) ][shopping ]list',
      '(check|cross) {item} off [from] [(my|the) ][shopping ]list',
    ],
  },
  {
    // Home Assistant's shopping list answers this too; there are no test sentences for it here.
    intent: 'HassShoppingListLastItems',
    language: 'en',
    templates: [
      "(what is|whats|what s|what are|what's) on [(my|the) ]shopping list",
      '(read|show|tell me) [(me|out) ][(my|the) ]shopping list',
      'what (do|should) (i|we) (need to buy|buy)',
    ],
  },
  {
    intent: 'HassListAddItem',
    language: 'en',
    templates: ['(add|put) {item} (to|on) [(my|the) ]{list_name:name} [list]'],
  },
  {
    intent: 'HassListCompleteItem',
    language: 'en',
    templates: [
      '(check off|cross off|complete|delete|remove) {item} (from|on|in|off) [(my|the) ]{list_name:name} [list]',
      '(check|cross) {item} off [from] [(my|the) ]{list_name:name} [list]',
    ],
  },
  {
    intent: 'HassMediaPause',
    language: 'en',
    templates: [
      '(pause|stop) [the ]{name}',
      '{name} (pause|stop)',
      `pause [${MEDIA_THING}] [in [the ]{area}]`,
      'pause [the ]{area} media player',
    ],
  },
  {
    intent: 'HassMediaUnpause',
    language: 'en',
    templates: [
      '(unpause|resume) [the ]{name}',
      '{name} (unpause|resume)',
      `(unpause|resume) [${MEDIA_THING}] [in [the ]{area}]`,
      '(unpause|resume) [the ]{area} media player',
    ],
  },
  {
    intent: 'HassMediaNext',
    language: 'en',
    templates: [`${SKIP_FORWARD} ${ON_PLAYER}`, `({name}|in [the ]{area}) ${SKIP_FORWARD}`],
  },
  {
    intent: 'HassMediaPrevious',
    language: 'en',
    templates: [`${GO_BACK} ${ON_PLAYER}`, `({name}|in [the ]{area}) ${GO_BACK}`],
  },
  {
    intent: 'HassSetVolume',
    language: 'en',
    templates: [
      '(set|change|turn) [the ]({name}|{area}) volume [(up|down)] to {volume:volume_level}',
      `${VOLUME_VERB} [the ]volume [(up|down)] [in [the ]{area}] to {volume:volume_level} ${ON_PLAYER}`,
      `(on|in) [the ]({name}|{area}) ${VOLUME_VERB} [the ]volume [(up|down)] to {volume:volume_level}`,
    ],
  },
  {
    intent: 'HassMediaSearchAndPlay',
    language: 'en',
    templates: [`play {search_query} ${WHERE_TO_PLAY}`],
  },
  ...MEDIA_CLASSES.map(
    ([mediaClass, words]): IntentSentences => ({
      intent: 'HassMediaSearchAndPlay',
      language: 'en',
      templates: [`play [the ]{search_query} ${words} ${WHERE_TO_PLAY}`, `play [the ]${words} {search_query} ${WHERE_TO_PLAY}`],
      slots: { media_class: mediaClass },
    }),
  ),
  {
    intent: 'HassVacuumStart',
    language: 'en',
    templates: ['(start|run) [the ]{name}', '(clean|vacuum) [the ]({floor}|{area})', 'start (cleaning|vacuuming) [the ]({floor}|{area})'],
  },
  {
    intent: 'HassVacuumReturnToBase',
    language: 'en',
    templates: ['(return|send) [the ]{name} [back ]to [the ](base|dock)', '[the ]{name} (return|go back) to [the ](base|dock)'],
  },
  {
    intent: 'HassGetWeather',
    language: 'en',
    templates: [
      '(whats|what is|hows|how is) the weather [like] [(in|for) {name}] [like]',
      '(whats|what is|hows|how is) the {name} weather [like]',
    ],
  },
];
