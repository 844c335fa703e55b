/**
 * Intents that only read or talk: answering one, even wrongly, changes nothing in the home. The
 * understander lets them stand inside talk about the home ("did someone leave the light on?"), and
 * the evaluation counts a wrong one as a miss, not a wrong action.
 */
export const QUERY_INTENTS: ReadonlySet<string> = new Set([
  'HassGetState',
  'HassClimateGetTemperature',
  'HassGetCurrentTime',
  'HassGetCurrentDate',
  'HassGetWeather',
  'HassTimerStatus',
  'HassNevermind',
  'HassRespond',
  'HassShoppingListLastItems',
]);
