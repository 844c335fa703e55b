/**
 * What seq_help answers without a name: the format of a sequence and a complete example the model
 * can copy (the unit tests create it, so the example always passes the checks it describes).
 */

/** A sequence that passes seq_create's checks where entity_call and timer_set exist. */
export const HELP_EXAMPLE = {
  name: 'good night',
  description: 'Lights off downstairs, then a reminder timer',
  in: { minutes: { type: 'integer', default: 30 } },
  out: ['timer'],
  groups: [
    {
      name: 'lights',
      calls: [
        { tool: 'entity_call', args: { entity: 'light.kitchen', service: 'turn_off' }, as: 'kitchen' },
        { tool: 'entity_call', args: { entity: 'light.living_room', service: 'turn_off' }, as: 'living_room' },
      ],
    },
    {
      name: 'reminder',
      calls: [{ tool: 'timer_set', args: { duration: '$args.minutes minutes', message: 'lock the door' }, as: 'timer' }],
    },
  ],
};

export function helpText(): Record<string, unknown> {
  return {
    format: [
      'A sequence is {name, description?, in?, out?, groups}. Groups run one after another; the calls inside a group run side by side (in order when a tool may not run concurrently, or with "parallel": false).',
      'A group is {name?, when?, parallel?, on_error?: "stop" (default) | "continue", calls: [{tool, args, as?}]}.',
      '"in" declares the arguments with their types (string, number, integer, boolean, object, array, any): {"room": "string"} or {"room": {"type": "string", "required": false, "default": "kitchen"}}. They are checked on every run.',
      'In args, "$args.room" is that argument (its type kept when it is the whole value); "$results.kitchen" (or "$results.kitchen.state") is what an earlier group\'s call with "as": "kitchen" returned. Calls of the same group cannot read each other.',
      '"out" lists the results handed back (all "as" names when absent). "when" is true, false, $args.x, not $args.x, or $args.x == "v" (also !=, >, <, >=, <=, contains).',
      'Inside a sequence, call a group with {"tool": "seq_call", "args": {"target": "lights"}} or a whole sequence with {"target": "#other", "args": {...}}; seq_when_call adds "when". A sequence never calls itself, even through others.',
      'Not allowed inside: sending messages (output_send__*, qq_send_*, mqtt_publish), agents (spawn_child, resident_agents), plugin changes (plugin_enable/disable/reload, skill_*), seq_run, seq_create, seq_delete.',
      'A sequence is as dangerous as its most dangerous step: running one with a dangerous step needs the owner\'s approval. A message that is just its name ("good night") runs it when it only reads or acts.',
    ],
    example: HELP_EXAMPLE,
    run_it_with: 'seq_run {"name": "good night", "args": {"minutes": 20}}',
  };
}
