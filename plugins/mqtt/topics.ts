/**
 * HomeAgent's own topic layout, shared by the state publisher, command topics, Home Assistant
 * discovery and remote nodes (docs/mqtt.md documents it for other systems):
 *
 *   <base>/status                     "online" (retained) / "offline" (last will)
 *   <base>/<entity_id>/state          the state as text ("on", "21.5"), retained; "" for unknown
 *   <base>/<entity_id>/attributes     the attributes as JSON, retained
 *   <base>/<entity_id>/availability   "online", or "offline" while the state is unavailable, retained
 *   <base>/<entity_id>/set            commands: a service name ("turn_on"), ON / OFF, or
 *                                     {"service": "set_value", "data": {"value": 3}}
 *   <base>/agent/notify               a text for the agent (Home Assistant's notify entity)
 *   <base>/agent/last_reply           the agent's last answer, retained
 *
 * Entity ids contain a dot (`switch.kitchen_light`), which is a plain character in MQTT topics.
 */

export interface TopicLayout {
  status: string;
  state(entityId: string): string;
  attributes(entityId: string): string;
  availability(entityId: string): string;
  command(entityId: string): string;
  /** Filter matching every entity's command topic. */
  commandFilter: string;
  /** The entity id in a command topic, or undefined when the topic is not one. */
  entityOfCommand(topic: string): string | undefined;
  agentNotify: string;
  agentLastReply: string;
}

export function topicLayout(base: string): TopicLayout {
  const root = base.replace(/\/+$/, '');
  const commandPattern = new RegExp(`^${escapeRegExp(root)}/([a-z_]+\\.[a-z0-9_]+)/set$`);
  return {
    status: `${root}/status`,
    state: (entityId) => `${root}/${entityId}/state`,
    attributes: (entityId) => `${root}/${entityId}/attributes`,
    availability: (entityId) => `${root}/${entityId}/availability`,
    command: (entityId) => `${root}/${entityId}/set`,
    commandFilter: `${root}/+/set`,
    entityOfCommand: (topic) => commandPattern.exec(topic)?.[1],
    agentNotify: `${root}/agent/notify`,
    agentLastReply: `${root}/agent/last_reply`,
  };
}

/** True when `topic` matches the MQTT filter (`+` one level, `#` the rest, including none). */
export function topicMatches(filter: string, topic: string): boolean {
  if (!filter.includes('+') && !filter.includes('#')) return topic === filter;
  return matchLevels(filter.split('/'), topic);
}

/**
 * The filter as a test, split once: a connection tests every inbound message against each of its
 * filters, and splitting the filter every time was a measurable share of the inbound path.
 */
export function compileFilter(filter: string): (topic: string) => boolean {
  if (!filter.includes('+') && !filter.includes('#')) return (topic) => topic === filter;
  const levels = filter.split('/');
  return (topic) => matchLevels(levels, topic);
}

function matchLevels(f: readonly string[], topic: string): boolean {
  const t = topic.split('/');
  for (let i = 0; i < f.length; i++) {
    const part = f[i];
    if (part === '#') return true;
    if (i >= t.length) return false;
    if (part !== '+' && part !== t[i]) return false;
  }
  return f.length === t.length;
}

/** Why a topic filter is invalid (MQTT 3.1.1 §4.7), or undefined. */
export function filterProblem(filter: string): string | undefined {
  if (filter.length === 0) return 'a topic filter cannot be empty';
  if (Buffer.byteLength(filter) > 65535) return 'a topic filter is at most 65535 bytes';
  if (filter.includes('\u0000')) return 'a topic filter cannot contain NUL';
  const levels = filter.split('/');
  for (const [i, level] of levels.entries()) {
    if (level.includes('#') && (level !== '#' || i !== levels.length - 1)) return '# must be a whole level and the last one';
    if (level.includes('+') && level !== '+') return '+ must be a whole level';
  }
  return undefined;
}

/** Why a topic to publish to is invalid, or undefined. */
export function topicProblem(topic: string): string | undefined {
  if (topic.length === 0) return 'a topic cannot be empty';
  if (topic.includes('#') || topic.includes('+') || topic.includes('\u0000')) return 'a topic to publish to cannot contain +, # or NUL';
  if (Buffer.byteLength(topic) > 65535) return 'a topic is at most 65535 bytes';
  return undefined;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
