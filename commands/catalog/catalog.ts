import type { DomainEvent } from '../../src/domain/events';
import type { DomainError } from '../../src/domain/errors';
import { type Aggregate, type CommandContext, type Decision, handle } from '../handle';

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

const OWNER = Symbol('catalog state owner');
type Owned = CatalogState & { [OWNER]?: object };
let run: object | null = null;

/** A token for the code running now, until its synchronous run ends (the next microtask drops it). */
function currentRun(): object {
  if (!run) {
    run = {};
    queueMicrotask(() => {
      run = null;
    });
  }
  return run;
}

/**
 * The state evolve may change: s itself when this same synchronous replay made it, else a copy of its collections.
 * The handler's cache shares a loaded state between concurrent loads, so a state from an earlier run is never
 * changed in place; within one replay (a synchronous loop) the copy is made once, so replay stays linear.
 * Entities are never changed in place either: a change replaces the entity object.
 */
function writable(s: CatalogState): Owned {
  const token = currentRun();
  if ((s as Owned)[OWNER] === token) return s;
  return {
    competitors: new Map(s.competitors),
    topics: new Map(s.topics),
    prompts: new Map(s.prompts),
    personas: new Map(s.personas),
    locations: new Map(s.locations),
    schedules: new Map(s.schedules),
    saved_views: new Map(s.saved_views),
    attributes: new Map(s.attributes),
    [OWNER]: token,
  };
}

/** Replaces the listed entries with changed copies (unknown ids are skipped). */
function change<T extends object>(m: Map<string, T>, ids: readonly string[], f: (x: T) => Partial<T>): void {
  for (const id of ids) {
    const x = m.get(id);
    if (x) m.set(id, { ...x, ...f(x) });
  }
}

const defined = <T extends object>(o: T) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;

export const Catalog: Aggregate<CatalogState> = {
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
  /** Never changes a state another load may hold (see writable); returns the next state. */
  evolve(previous, e: DomainEvent): CatalogState {
    const s = writable(previous);
    switch (e.type) {
      case 'CompetitorAdded': {
        const { competitor_id: id, ...c } = e.data;
        s.competitors.set(id, { id, ...c, removed: false });
        break;
      }
      case 'CompetitorRenamed':
        change(s.competitors, [e.data.competitor_id], () => ({ name: e.data.name }));
        break;
      case 'CompetitorIdentifiersChanged':
        change(s.competitors, [e.data.competitor_id], () => ({ identifiers: e.data.identifiers }));
        break;
      case 'CompetitorRemoved':
        change(s.competitors, [e.data.competitor_id], () => ({ removed: true }));
        break;
      case 'TopicCreated':
        s.topics.set(e.data.topic_id, { id: e.data.topic_id, name: e.data.name, deleted: false, deleted_prompt_ids: [] });
        break;
      case 'TopicDeleted':
        change(s.topics, [e.data.topic_id], () => ({ deleted: true, deleted_prompt_ids: e.data.soft_deleted_prompt_ids }));
        change(s.prompts, e.data.soft_deleted_prompt_ids, () => ({ soft_deleted: true }));
        break;
      case 'TopicRestored':
        change(s.topics, [e.data.topic_id], () => ({ deleted: false, deleted_prompt_ids: [] }));
        change(s.prompts, e.data.restored_prompt_ids, () => ({ soft_deleted: false }));
        break;
      case 'PromptCreated': {
        const { prompt_id: id, ...p } = e.data;
        s.prompts.set(id, { id, ...p, soft_deleted: false, hard_deleted: false, has_answers: false });
        break;
      }
      case 'PromptUpdated': {
        const { prompt_id, ...changes } = e.data;
        change(s.prompts, [prompt_id], () => defined(changes) as Partial<PromptState>);
        break;
      }
      case 'PromptDeleted':
        change(s.prompts, [e.data.prompt_id], () => (e.data.soft_deleted ? { soft_deleted: true } : { hard_deleted: true }));
        break;
      case 'PromptAnswered':
        change(s.prompts, [e.data.prompt_id], () => ({ has_answers: true }));
        break;
      case 'PersonaCreated':
        s.personas.set(e.data.persona_id, { id: e.data.persona_id, name: e.data.name, description: e.data.description });
        break;
      case 'LocationCreated': {
        const { location_id: id, ...l } = e.data;
        s.locations.set(id, { id, ...l });
        break;
      }
      case 'PromptScheduleCreated': {
        const { schedule_id: id, ...x } = e.data;
        s.schedules.set(id, { id, ...x, archived: false });
        break;
      }
      case 'PromptScheduleUpdated': {
        const { schedule_id, ...changes } = e.data;
        change(s.schedules, [schedule_id], () => defined(changes) as Partial<ScheduleState>);
        break;
      }
      case 'PromptScheduleArchived':
        change(s.schedules, [e.data.schedule_id], () => ({ archived: true }));
        break;
      case 'SavedViewCreated':
        s.saved_views.set(e.data.view_id, { id: e.data.view_id, name: e.data.name, filters: e.data.filters });
        break;
      case 'SavedViewUpdated':
        change(s.saved_views, [e.data.view_id], () => defined({ name: e.data.name, filters: e.data.filters }) as Partial<SavedViewState>);
        break;
      case 'AttributeCreated':
        s.attributes.set(e.data.attribute_id, { id: e.data.attribute_id, name: e.data.name, description: e.data.description });
        break;
      default:
        return previous;
    }
    return s;
  },
};

/** Case-insensitive, whitespace-insensitive name key (topics, attributes). */
export const nameKey = (name: string) => name.trim().replace(/\s+/g, ' ').toLocaleLowerCase('en-US');

/** A live prompt: neither soft- nor hard-deleted. */
export const isLivePrompt = (p: PromptState | undefined): p is PromptState => !!p && !p.soft_deleted && !p.hard_deleted;

/** handle() on the website's catalogue stream (conflicts are retried by handle itself). decide must be pure. */
export function handleCatalog<R>(ctx: CommandContext, websiteId: string, decide: (s: CatalogState) => Decision<R> | DomainError) {
  return handle({ ...ctx, websiteId }, catalogStream(websiteId), Catalog, decide);
}

/** The answers of writes, in the listings' shapes (without the read models' timestamps). */
export const competitorView = (c: CompetitorState) => ({ id: c.id, name: c.name, url: c.url, normalized_url: c.normalized_url, identifiers: c.identifiers });
export const topicView = (t: TopicState) => ({ id: t.id, name: t.name });
export const promptView = (p: PromptState) => ({ id: p.id, text: p.text, topic_id: p.topic_id, type: p.type, status: p.status, tags: p.tags });
export const scheduleView = (x: ScheduleState) => ({
  id: x.id,
  name: x.name,
  models: x.models,
  starts_on: x.starts_on,
  ends_on: x.ends_on,
  frequency: x.frequency,
  is_active: x.is_active && !x.archived,
  archived: x.archived,
});
export type CompetitorView = ReturnType<typeof competitorView>;
export type TopicView = ReturnType<typeof topicView>;
export type PromptView = ReturnType<typeof promptView>;
export type ScheduleView = ReturnType<typeof scheduleView>;
