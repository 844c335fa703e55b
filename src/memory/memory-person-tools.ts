/** person_* tools: people, their traits (one current value each, old values kept) and their relations. */
import { type ToolContext, type ToolDefinition, ToolError } from '../shared/tool.js';
import { cut, integerArg, isoDate, notFound, requiredText, type ToolArgs } from '../shared/tool-args.js';
import { normalizeName, normalizeRelationType } from './graph-names.js';
import type { GraphRelation } from './graph-types.js';
import { compactRelation, MEMORY_OWNER, type MemoryToolDeps, toolProvenance } from './memory-graph-tools.js';

const HINT_FIND_PERSON = 'call memory_introspect for the known entities, or memory_recall with what you know about the person';
/** Past values shown per trait. */
const TRAIT_HISTORY = 3;
const MAX_LISTED = 30;

function personName(args: ToolArgs, field: string): string {
  const name = requiredText(args, field, 'a person\'s name, e.g. "Anna"');
  if (normalizeName(name) === '')
    throw new ToolError({ reason: 'format', field, detail: `${field} has no letters or digits`, hint: 'pass a name' });
  return name;
}

function relationName(args: ToolArgs, field: string, example: string): string {
  const hint = `a short relation or trait name, e.g. "${example}"`;
  const text = requiredText(args, field, hint, 64);
  if (normalizeRelationType(text) === '') throw new ToolError({ reason: 'format', field, detail: `${field} is empty`, hint });
  return text;
}

export function personTools(deps: MemoryToolDeps): ToolDefinition[] {
  const { graph, people } = deps.stores;
  const provenanceOf = (context: ToolContext | undefined) => {
    const { speaker: _speaker, ...provenance } = toolProvenance(deps, context);
    return provenance;
  };
  const other = (r: GraphRelation, selfId: number) => (r.source.id === selfId ? r.target : r.source);
  return [
    {
      name: 'person_query',
      owner: MEMORY_OWNER,
      tier: 'read',
      parallel_safe: true,
      no_memory: true,
      description: 'What memory knows about a person: current traits (with earlier values) and relations to other people.',
      parameters: {
        type: 'object',
        properties: { name: { type: 'string', minLength: 1, maxLength: 200 } },
        required: ['name'],
        additionalProperties: false,
      },
      execute: (args: ToolArgs) => {
        const name = personName(args, 'name');
        const view = people.query(name);
        if (!view) throw notFound('name', name, HINT_FIND_PERSON);
        const id = view.person.id;
        return {
          name: view.person.name,
          type: view.person.type,
          ...(view.person.aliases.length > 0 && { aliases: view.person.aliases.slice(0, 10) }),
          traits: view.traits.slice(0, MAX_LISTED).map((trait) => {
            const earlier = graph
              .history(id, trait.type)
              .filter((r) => r.valid_to !== null)
              .slice(0, TRAIT_HISTORY)
              .map((r) => ({ value: r.target.name, until: isoDate(r.valid_to as number) }));
            return {
              trait: trait.type,
              value: trait.target.name,
              since: isoDate(trait.valid_from),
              ...(trait.sentence && { said: cut(trait.sentence.text, 160) }),
              ...(earlier.length > 0 && { earlier }),
            };
          }),
          relations: view.relations
            .filter((r) => r.source.id === id)
            .slice(0, MAX_LISTED)
            .map((r) => ({ relation: r.type, person: other(r, id).name })),
        };
      },
    },
    {
      name: 'person_set_trait',
      owner: MEMORY_OWNER,
      tier: 'act',
      description:
        "Record a person's trait (birthday, favourite_food, lives_in, ...). A new value replaces the old one, which is kept as history.",
      parameters: {
        type: 'object',
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 200 },
          trait: { type: 'string', minLength: 1, maxLength: 64 },
          value: { type: 'string', minLength: 1, maxLength: 200 },
        },
        required: ['name', 'trait', 'value'],
        additionalProperties: false,
      },
      execute: async (args: ToolArgs, context?: ToolContext) => {
        const name = personName(args, 'name');
        const trait = relationName(args, 'trait', 'favourite_food');
        const value = requiredText(args, 'value', 'the trait\'s value, e.g. "pizza"');
        if (normalizeName(value) === normalizeName(name)) {
          throw new ToolError({
            reason: 'format',
            field: 'value',
            detail: 'a trait value cannot be the person',
            hint: 'pass the value itself',
          });
        }
        const before = graph.history(name, trait).find((r) => r.valid_to === null);
        await people.setTrait(name, trait, value, provenanceOf(context));
        const replaced = before && normalizeName(before.target.name) !== normalizeName(value) ? before.target.name : undefined;
        return { name, trait: normalizeRelationType(trait), value, ...(replaced !== undefined && { replaced }) };
      },
    },
    {
      name: 'person_relate',
      owner: MEMORY_OWNER,
      tier: 'act',
      description:
        'Record how two people are related (friend_of, parent_of, ...), stored both ways; give inverse_relation when the other ' +
        'direction has another name (parent_of / child_of).',
      parameters: {
        type: 'object',
        properties: {
          person_a: { type: 'string', minLength: 1, maxLength: 200 },
          relation: { type: 'string', minLength: 1, maxLength: 64 },
          person_b: { type: 'string', minLength: 1, maxLength: 200 },
          inverse_relation: { type: 'string', minLength: 1, maxLength: 64 },
        },
        required: ['person_a', 'relation', 'person_b'],
        additionalProperties: false,
      },
      execute: async (args: ToolArgs, context?: ToolContext) => {
        const a = personName(args, 'person_a');
        const relation = relationName(args, 'relation', 'friend_of');
        const b = personName(args, 'person_b');
        const inverse = args.inverse_relation === undefined ? undefined : relationName(args, 'inverse_relation', 'child_of');
        if (normalizeName(a) === normalizeName(b)) {
          throw new ToolError({
            reason: 'format',
            field: 'person_b',
            detail: 'a person cannot be related to themselves',
            hint: 'pass two different people',
          });
        }
        await people.relate(a, relation, b, { ...(inverse !== undefined && { inverse }), provenance: provenanceOf(context) });
        const type = normalizeRelationType(relation);
        return { related: [`${a} ${type} ${b}`, `${b} ${inverse === undefined ? type : normalizeRelationType(inverse)} ${a}`] };
      },
    },
    {
      name: 'person_network',
      owner: MEMORY_OWNER,
      tier: 'read',
      parallel_safe: true,
      no_memory: true,
      description: 'The people around a person, reached through relations between people, up to depth hops (default 2, at most 3).',
      parameters: {
        type: 'object',
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 200 },
          depth: { type: 'integer', minimum: 1, maximum: 3, default: 2 },
        },
        required: ['name'],
        additionalProperties: false,
      },
      execute: (args: ToolArgs) => {
        const name = personName(args, 'name');
        const depth = integerArg(args, 'depth', { min: 1, max: 3, fallback: 2 });
        const person = graph.entity(name);
        if (!person) throw notFound('name', name, HINT_FIND_PERSON);
        const network = people.network(person.id, { depth, nodeBudget: MAX_LISTED + 1 });
        return {
          name: person.name,
          people: network.entities.filter((e) => e.id !== person.id).map((e) => ({ name: e.name, depth: e.depth })),
          relations: network.relations.slice(0, MAX_LISTED).map((r) => {
            const { subject, relation, object } = compactRelation(r);
            return { subject, relation, object };
          }),
        };
      },
    },
  ];
}
