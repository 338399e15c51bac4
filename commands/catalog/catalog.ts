import { type EventsOf, exhaustive, catalogEvents } from '../../src/domain/events';
import { typesOf } from '../../src/domain/event-lists';
import type { DomainError } from '../../src/domain/errors';
import { type Aggregate, type CommandContext, type Decision, handle, mapWriter } from '../handle';

export interface CompetitorState {
  id: string;
  name: string;
  url: string;
  normalized_url: string;
  identifiers: string[];
  removed: boolean;
}

export interface TopicState {
  id: string;
  name: string;
  deleted: boolean;
  /** the prompts soft-deleted together with the topic: they come back when it is restored */
  deleted_prompt_ids: string[];
}

export type PromptType = 'branded' | 'non_branded';
export type PromptStatus = 'active' | 'paused';

export interface PromptState {
  id: string;
  text: string;
  topic_id: string | null;
  type: PromptType;
  status: PromptStatus;
  tags: string[];
  soft_deleted: boolean;
  /** gone for good: it never had answers; its id is refused from then on */
  hard_deleted: boolean;
  /** at least one answer was (or is being) recorded: a delete can only soft-delete it */
  has_answers: boolean;
}

export interface PersonaState {
  id: string;
  name: string;
  description: string | null;
}

export interface LocationState {
  id: string;
  location: string;
  country: string;
  region: string | null;
  city: string | null;
}

export type Frequency = 'daily' | 'weekly';

export interface ScheduleState {
  id: string;
  name: string;
  models: string[];
  starts_on: string | null;
  ends_on: string | null;
  frequency: Frequency;
  is_active: boolean;
  /** absent: 1 */
  samples_per_prompt?: number;
  archived: boolean;
}

export interface SavedViewState {
  id: string;
  name: string;
  filters: Record<string, unknown>;
}

export interface AttributeState {
  id: string;
  name: string;
  description: string | null;
}

/** The catalogue of one website, stream `catalog-<website_id>`: everything its analytics are measured against. */
export interface CatalogState {
  competitors: Map<string, CompetitorState>;
  /** soft-deleted topics included */
  topics: Map<string, TopicState>;
  /** soft- and hard-deleted prompts included */
  prompts: Map<string, PromptState>;
  personas: Map<string, PersonaState>;
  locations: Map<string, LocationState>;
  schedules: Map<string, ScheduleState>;
  saved_views: Map<string, SavedViewState>;
  attributes: Map<string, AttributeState>;
}

export const catalogStream = (websiteId: string) => `catalog-${websiteId}`;

/** The events of a catalogue stream. */
export const CATALOG_EVENT_TYPES = typesOf(catalogEvents);
export type CatalogEvent = EventsOf<typeof CATALOG_EVENT_TYPES>;

const defined = <T extends object>(o: T) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;

/**
 * Folds one event into the catalogue. `owned`: the state is load's own copy and its maps are changed in place;
 * otherwise the maps the event touches are copied into a new state and `s` is left as it was. Entities are never
 * changed in place either way: a change replaces the entry.
 */
function fold(s: CatalogState, e: CatalogEvent, owned: boolean): CatalogState {
  const m = mapWriter(s, owned);
  const write = m.write;
  /** Replaces the listed entries with changed copies (unknown ids are skipped, and copy nothing). */
  const change = <K extends keyof CatalogState>(k: K, ids: readonly string[], f: (x: EntryOf<K>) => Partial<EntryOf<K>>) => {
    for (const id of ids) {
      const x = m.state[k].get(id) as EntryOf<K> | undefined;
      if (x) (write(k) as Map<string, EntryOf<K>>).set(id, { ...x, ...f(x) });
    }
  };
  switch (e.type) {
    case 'CompetitorAdded': {
      const { competitor_id: id, ...c } = e.data;
      write('competitors').set(id, { id, ...c, removed: false });
      break;
    }
    case 'CompetitorRenamed':
      change('competitors', [e.data.competitor_id], () => ({ name: e.data.name }));
      break;
    case 'CompetitorIdentifiersChanged':
      change('competitors', [e.data.competitor_id], () => ({ identifiers: e.data.identifiers }));
      break;
    case 'CompetitorRemoved':
      change('competitors', [e.data.competitor_id], () => ({ removed: true }));
      break;
    case 'TopicCreated':
      write('topics').set(e.data.topic_id, { id: e.data.topic_id, name: e.data.name, deleted: false, deleted_prompt_ids: [] });
      break;
    case 'TopicDeleted':
      change('topics', [e.data.topic_id], () => ({ deleted: true, deleted_prompt_ids: e.data.soft_deleted_prompt_ids }));
      change('prompts', e.data.soft_deleted_prompt_ids, () => ({ soft_deleted: true }));
      break;
    case 'TopicRestored':
      change('topics', [e.data.topic_id], () => ({ deleted: false, deleted_prompt_ids: [] }));
      change('prompts', e.data.restored_prompt_ids, () => ({ soft_deleted: false }));
      break;
    case 'PromptCreated': {
      const { prompt_id: id, ...p } = e.data;
      write('prompts').set(id, { id, ...p, soft_deleted: false, hard_deleted: false, has_answers: false });
      break;
    }
    case 'PromptUpdated': {
      const { prompt_id, ...changes } = e.data;
      change('prompts', [prompt_id], () => defined(changes) as Partial<PromptState>);
      break;
    }
    case 'PromptDeleted':
      change('prompts', [e.data.prompt_id], () => (e.data.soft_deleted ? { soft_deleted: true } : { hard_deleted: true }));
      break;
    case 'PromptAnswered':
      change('prompts', [e.data.prompt_id], () => ({ has_answers: true }));
      break;
    case 'PersonaCreated':
      write('personas').set(e.data.persona_id, { id: e.data.persona_id, name: e.data.name, description: e.data.description });
      break;
    case 'LocationCreated': {
      const { location_id: id, ...l } = e.data;
      write('locations').set(id, { id, ...l });
      break;
    }
    case 'PromptScheduleCreated': {
      const { schedule_id: id, ...x } = e.data;
      write('schedules').set(id, { id, ...x, archived: false });
      break;
    }
    case 'PromptScheduleUpdated': {
      const { schedule_id, ...changes } = e.data;
      change('schedules', [schedule_id], () => defined(changes) as Partial<ScheduleState>);
      break;
    }
    case 'PromptScheduleArchived':
      change('schedules', [e.data.schedule_id], () => ({ archived: true }));
      break;
    case 'SavedViewCreated':
      write('saved_views').set(e.data.view_id, { id: e.data.view_id, name: e.data.name, filters: e.data.filters });
      break;
    case 'SavedViewUpdated':
      change('saved_views', [e.data.view_id], () => defined({ name: e.data.name, filters: e.data.filters }) as Partial<SavedViewState>);
      break;
    case 'AttributeCreated':
      write('attributes').set(e.data.attribute_id, { id: e.data.attribute_id, name: e.data.name, description: e.data.description });
      break;
    // a topic's economics are the AI value's (its read model), not a rule of the catalogue
    case 'TopicEconomicsSet':
      break;
    default:
      return exhaustive(e, m.state);
  }
  return m.state;
}

type EntryOf<K extends keyof CatalogState> = CatalogState[K] extends Map<string, infer T> ? T : never;

/** A copy whose maps load may change (the entries are shared: they are replaced, never changed). */
const ownCopy = (s: CatalogState): CatalogState => ({
  competitors: new Map(s.competitors),
  topics: new Map(s.topics),
  prompts: new Map(s.prompts),
  personas: new Map(s.personas),
  locations: new Map(s.locations),
  schedules: new Map(s.schedules),
  saved_views: new Map(s.saved_views),
  attributes: new Map(s.attributes),
});

export const Catalog: Aggregate<CatalogState, CatalogEvent> = {
  types: CATALOG_EVENT_TYPES,
  initial: () => ({
    competitors: new Map(),
    topics: new Map(),
    prompts: new Map(),
    personas: new Map(),
    locations: new Map(),
    schedules: new Map(),
    saved_views: new Map(),
    attributes: new Map(),
  }),
  /** copies only the maps the event touches */
  evolve: (s, e) => fold(s, e, false),
  replay: { own: ownCopy, apply: (s, e) => fold(s, e, true) },
};

/** Case-insensitive, whitespace-insensitive name key (topics, attributes). */
export const nameKey = (name: string) => name.trim().replace(/\s+/g, ' ').toLocaleLowerCase('en-US');

/** A live prompt: neither soft- nor hard-deleted. */
export const isLivePrompt = (p: PromptState | undefined): p is PromptState => !!p && !p.soft_deleted && !p.hard_deleted;

/** handle() on the website's catalogue stream (conflicts are retried by handle itself). decide must be pure. */
export function handleCatalog<R>(ctx: CommandContext, websiteId: string, decide: (s: CatalogState) => Decision<R> | DomainError) {
  return handle({ ...ctx, websiteId }, catalogStream(websiteId), Catalog, decide);
}

/** What a catalogue write answers: the id of what it wrote (the operation reads the row back after the wait). */
export interface Written {
  id: string;
}

/** A competitor as the 409 of a duplicate names it (the listing's shape without the read model's timestamps). */
export const competitorView = (c: CompetitorState) => ({
  id: c.id,
  name: c.name,
  url: c.url,
  normalized_url: c.normalized_url,
  identifiers: c.identifiers,
});
/** A topic as the 409 of a duplicate name names it. */
export const topicView = (t: TopicState) => ({ id: t.id, name: t.name });
export type CompetitorView = ReturnType<typeof competitorView>;
