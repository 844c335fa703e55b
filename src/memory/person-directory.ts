/**
 * The social layer over the graph: people are entities of type `person`; a trait is a
 * single-valued relation from a person to a value (setting it again supersedes the old value,
 * kept as history); a relation between two people is stored in both directions.
 */
import { ToolError } from '../shared/tool.js';
import type { CommitResult, EntityKey, GraphProvenance, GraphStore, Neighbourhood } from './graph-store.js';
import type { GraphEntity, GraphRelation } from './graph-types.js';
import { DEFAULT_WALK_DEPTH } from './graph-walk.js';

export const PERSON_TYPE = 'person';
export const TRAIT_VALUE_TYPE = 'value';

export interface PersonView {
  person: GraphEntity;
  /** Current relations from the person to things that are not people. */
  traits: GraphRelation[];
  /** Current relations between the person and other people (either direction). */
  relations: GraphRelation[];
}

export class PersonDirectory {
  readonly #graph: GraphStore;

  constructor(graph: GraphStore) {
    this.#graph = graph;
  }

  /** person_set_trait: overwrites the trait's current value. */
  async setTrait(
    person: string,
    trait: string,
    value: string,
    provenance: GraphProvenance & { sentence?: string } = {},
  ): Promise<CommitResult> {
    requireText(person, 'name');
    requireText(trait, 'trait');
    requireText(value, 'value');
    return this.#graph.commit(
      [
        {
          subject: person,
          relation: trait,
          object: value,
          confidence: 1,
          subject_type: PERSON_TYPE,
          object_type: TRAIT_VALUE_TYPE,
          ...(provenance.sentence !== undefined && { sentence: provenance.sentence }),
        },
      ],
      provenance,
      { singleValued: true },
    );
  }

  /** person_relate: `a —relation→ b` and `b —inverse→ a` (the same type unless `inverse` is given). */
  async relate(
    a: string,
    relation: string,
    b: string,
    options: { inverse?: string; provenance?: GraphProvenance & { sentence?: string } } = {},
  ): Promise<CommitResult> {
    requireText(a, 'person_a');
    requireText(relation, 'relation');
    requireText(b, 'person_b');
    const sentence = options.provenance?.sentence;
    const common = { confidence: 1, subject_type: PERSON_TYPE, object_type: PERSON_TYPE, ...(sentence !== undefined && { sentence }) };
    return this.#graph.commit(
      [
        { subject: a, relation, object: b, ...common },
        { subject: b, relation: options.inverse ?? relation, object: a, ...common },
      ],
      options.provenance ?? {},
    );
  }

  /** person_query: the person with traits and relations; undefined when unknown. */
  query(name: EntityKey): PersonView | undefined {
    const person = this.#graph.entity(name);
    if (!person) return undefined;
    const current = this.#graph.relationsOf(person.id);
    const isPerson = (r: GraphRelation) => (r.source.id === person.id ? r.target.type : r.source.type) === PERSON_TYPE;
    return {
      person,
      traits: current.filter((r) => r.source.id === person.id && !isPerson(r)),
      relations: current.filter(isPerson),
    };
  }

  /** person_network: people reachable through relations between people (depth 2 by default). */
  network(name: EntityKey, options: { depth?: number; nodeBudget?: number } = {}): Neighbourhood {
    return this.#graph.neighbours([name], {
      depth: options.depth ?? DEFAULT_WALK_DEPTH,
      entityType: PERSON_TYPE,
      ...(options.nodeBudget !== undefined && { nodeBudget: options.nodeBudget }),
    });
  }
}

function requireText(value: string, field: string): void {
  if (value.trim() === '') throw new ToolError({ reason: 'required', field, detail: `${field} must not be empty` });
}
