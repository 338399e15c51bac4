import { describe, expect, it } from 'vitest';
import { Catalog, type CatalogState } from '../../commands/catalog/catalog';
import { decideCreateAttribute } from '../../commands/catalog/create-attribute';
import { decideCreateLocation } from '../../commands/catalog/create-location';
import { decideCreatePersona } from '../../commands/catalog/create-persona';
import { CreateSavedView, decideCreateSavedView } from '../../commands/catalog/create-saved-view';
import { CreateSchedule, decideCreateSchedule } from '../../commands/catalog/create-schedule';
import { decideUpdateSavedView } from '../../commands/catalog/update-saved-view';
import { decideUpdateSchedule, UpdateSchedule } from '../../commands/catalog/update-schedule';
import { MODEL_IDS } from '../../src/domain/models';
import { given } from '../support/given';
import { competitorAdded, promptCreated, promptDeleted, scheduleCreated, W } from './catalog-events';

describe('personas, locations, attributes', () => {
  it('given a persona, then PersonaCreated with a null description when none is given', () => {
    given(Catalog)
      .when((s) => decideCreatePersona(s, { website_id: W, persona_id: 'x1', name: 'CFO' }))
      .then([{ type: 'PersonaCreated', data: { persona_id: 'x1', name: 'CFO', description: null } }]);
  });

  it('given a location, then LocationCreated with region and city null when omitted', () => {
    const { result } = given(Catalog)
      .when((s) => decideCreateLocation(s, { website_id: W, location_id: 'l1', location: 'Austin, US', country: 'United States', city: 'Austin' }))
      .then([
        { type: 'LocationCreated', data: { location_id: 'l1', location: 'Austin, US', country: 'United States', region: null, city: 'Austin' } },
      ]);
    expect(result).toEqual({ id: 'l1' });
  });

  it('given an attribute of that name in another case, then conflict', () => {
    given(Catalog, { type: 'AttributeCreated', data: { attribute_id: 'a1', name: 'Price', description: null } })
      .when((s) => decideCreateAttribute(s, { website_id: W, attribute_id: 'a2', name: 'price' }))
      .then({ kind: 'conflict', message: 'Attribute already exists', details: { existing: { id: 'a1', name: 'Price', description: null } } });
  });
});

describe('prompt schedules', () => {
  const models = [MODEL_IDS[0], MODEL_IDS[1]];

  /** Creates the schedule s1, named Q1, for the two models, over this window. */
  const createQ1 = (window: Pick<CreateSchedule, 'starts_on' | 'ends_on' | 'frequency'>) => (s: CatalogState) =>
    decideCreateSchedule(s, { website_id: W, schedule_id: 's1', name: 'Q1', models, ...window });

  it('given a window, then PromptScheduleCreated, active by default', () => {
    given(Catalog)
      .when(createQ1({ starts_on: '2026-01-01', ends_on: '2026-03-31', frequency: 'weekly' }))
      .then([
        {
          type: 'PromptScheduleCreated',
          data: {
            schedule_id: 's1',
            name: 'Q1',
            models,
            starts_on: '2026-01-01',
            ends_on: '2026-03-31',
            frequency: 'weekly',
            is_active: true,
            samples_per_prompt: 1,
          },
        },
      ]);
  });

  it('given ends_on before starts_on, then invalid naming ends_on (also when an edit makes it so)', () => {
    given(Catalog)
      .when(createQ1({ starts_on: '2026-02-01', ends_on: '2026-01-31', frequency: 'daily' }))
      .then({ kind: 'invalid', message: 'ends_on: must not be before starts_on' });
    given(Catalog, scheduleCreated('s1', { starts_on: '2026-02-01' }))
      .when((s) => decideUpdateSchedule(s, 's1', { website_id: W, ends_on: '2026-01-01' }))
      .then({ kind: 'invalid', message: 'ends_on: must not be before starts_on' });
  });

  it('given an edit and archived, then PromptScheduleUpdated with the changes, then PromptScheduleArchived', () => {
    const { result } = given(Catalog, scheduleCreated('s1'))
      .when((s) => decideUpdateSchedule(s, 's1', { website_id: W, name: 'Renamed', ends_on: null, is_active: false, archived: true }))
      .then([
        { type: 'PromptScheduleUpdated', data: { schedule_id: 's1', name: 'Renamed', is_active: false } },
        { type: 'PromptScheduleArchived', data: { schedule_id: 's1' } },
      ]);
    expect(result).toEqual({ id: 's1' });
  });

  it('given an archived schedule, then edits are a conflict and archiving again appends nothing', () => {
    const history = [scheduleCreated('s1'), { type: 'PromptScheduleArchived', data: { schedule_id: 's1' } } as const];
    given(Catalog, ...history)
      .when((s) => decideUpdateSchedule(s, 's1', { website_id: W, name: 'X' }))
      .then({ kind: 'conflict', message: 'Prompt schedule is archived' });
    given(Catalog, ...history)
      .when((s) => decideUpdateSchedule(s, 's1', { website_id: W, archived: true }))
      .then([]);
  });

  it('given an unknown schedule, then not found', () => {
    given(Catalog)
      .when((s) => decideUpdateSchedule(s, 's1', { website_id: W, name: 'X' }))
      .then({ kind: 'not_found', message: 'Prompt schedule not found' });
  });

  it('validates models with the model catalogue and days as real YYYY-MM-DD', () => {
    const base = { website_id: W, name: 'S', models, frequency: 'daily' };
    const issue = (body: unknown) => {
      const r = CreateSchedule.safeParse(body);
      return r.success ? null : `${r.error.issues[0].path.join('.')}: ${r.error.issues[0].message}`;
    };
    expect(issue(base)).toBeNull();
    expect(issue({ ...base, models: ['nope'] })).toMatch(/^models\.0: unknown model "nope"; expected one of: /);
    expect(issue({ ...base, models: [] })).toBe('models: must list at least one model');
    expect(issue({ ...base, models: [models[0], models[0]] })).toBe('models: must not repeat a model');
    expect(issue({ ...base, starts_on: '2026-02-30' })).toBe('starts_on: must be a real calendar day');
    expect(issue({ ...base, ends_on: '2026-02-03T00:00:00Z' })).toBe('ends_on: must be a date YYYY-MM-DD');
    expect(issue({ ...base, frequency: 'hourly' })).toBe("frequency: must be 'daily' or 'weekly'");
    expect(UpdateSchedule.safeParse({ website_id: W, archived: false }).success).toBe(false);
  });
});

describe('saved views', () => {
  it('given filters the API cannot reproduce, then they are stored as given', () => {
    const filters = { models_not: [MODEL_IDS[0]], sentiment: ['negative'], source_tags: { any: ['news'] } };
    const parsed = CreateSavedView.parse({ website_id: W, name: 'No X', filters });
    given(Catalog)
      .when((s) => decideCreateSavedView(s, { ...parsed, view_id: 'v1' }))
      .then([{ type: 'SavedViewCreated', data: { view_id: 'v1', name: 'No X', filters } }]);
  });

  it('given an edit, then the id stays and filters are replaced as a whole; the same filters append nothing', () => {
    const created = { type: 'SavedViewCreated', data: { view_id: 'v1', name: 'A', filters: { models: ['x'] } } } as const;
    given(Catalog, created)
      .when((s) => decideUpdateSavedView(s, 'v1', { website_id: W, filters: { prompt_status: 'active' } }))
      .then([{ type: 'SavedViewUpdated', data: { view_id: 'v1', filters: { prompt_status: 'active' } } }]);
    given(Catalog, created)
      .when((s) => decideUpdateSavedView(s, 'v1', { website_id: W, name: 'A', filters: { models: ['x'] } }))
      .then([]);
    given(Catalog)
      .when((s) => decideUpdateSavedView(s, 'v1', { website_id: W, name: 'B' }))
      .then({ kind: 'not_found', message: 'Saved view not found' });
  });

  it("given filter ids, then each must be this catalogue's (removed and soft-deleted ones still are; another website's never)", () => {
    const history = [
      promptCreated('p1'),
      promptDeleted('p1', true),
      promptCreated('p2'),
      promptDeleted('p2', false),
      competitorAdded('c1'),
      { type: 'CompetitorRemoved', data: { competitor_id: 'c1' } } as const,
      scheduleCreated('s1'),
      { type: 'LocationCreated', data: { location_id: 'l1', location: 'Berlin', country: 'DE', region: null, city: null } } as const,
    ];
    const create = (filters: Record<string, unknown>) => (s: Parameters<typeof decideCreateSavedView>[0]) =>
      decideCreateSavedView(s, { website_id: W, name: 'V', filters, view_id: 'v1' });
    const own = { prompt_ids: ['p1'], competitor_ids: ['c1'], location_ids: ['l1'], schedule_id: 's1' };
    given(Catalog, ...history)
      .when(create(own))
      .then([{ type: 'SavedViewCreated', data: { view_id: 'v1', name: 'V', filters: own } }]);
    given(Catalog, ...history)
      .when(create({ ...own, schedule_id: 'default' }))
      .then([{ type: 'SavedViewCreated', data: { view_id: 'v1', name: 'V', filters: { ...own, schedule_id: 'default' } } }]);
    given(Catalog, ...history)
      .when(create({ prompt_ids: ['p1', 'p2'] }))
      .then({ kind: 'invalid', message: 'filters.prompt_ids[1]: no prompt of this website has this id' });
    given(Catalog, ...history)
      .when(create({ competitor_ids: ['elsewhere'] }))
      .then({ kind: 'invalid', message: 'filters.competitor_ids[0]: no competitor of this website has this id' });
    given(Catalog, ...history)
      .when(create({ location_ids: ['l1', 'l2'] }))
      .then({ kind: 'invalid', message: 'filters.location_ids[1]: no location of this website has this id' });
    given(Catalog, ...history)
      .when(create({ schedule_id: 's2' }))
      .then({ kind: 'invalid', message: 'filters.schedule_id: no schedule of this website has this id' });
    given(Catalog, ...history, { type: 'SavedViewCreated', data: { view_id: 'v1', name: 'V', filters: own } })
      .when((s) => decideUpdateSavedView(s, 'v1', { website_id: W, filters: { ...own, competitor_ids: ['c1', 'c9'] } }))
      .then({ kind: 'invalid', message: 'filters.competitor_ids[1]: no competitor of this website has this id' });
  });

  it('bounds the stored filters: typed known keys, bounded unknown ones', () => {
    const issue = (filters: unknown) => {
      const r = CreateSavedView.safeParse({ website_id: W, name: 'V', filters });
      return r.success ? null : `${r.error.issues[0].path.join('.')}: ${r.error.issues[0].message}`;
    };
    expect(issue({ competitor_ids: ['nope'] })).toBe('filters.competitor_ids.0: must be a UUID');
    expect(issue({ models_not: ['nope'] })).toMatch(/^filters\.models_not\.0: unknown model/);
    expect(issue({ prompt_status: 'gone' })).toBe("filters.prompt_status: must be 'active' or 'paused'");
    expect(issue({ whatever: 'x'.repeat(2001) })).toBe('filters.whatever: must be at most 2000 characters');
    expect(issue({ deep: { a: { b: { c: { d: 1 } } } } })).toBe('filters.deep.a.b.c: must be nested at most 4 levels deep');
    expect(issue({ sentiment: ['negative', 'a\u0000b'] })).toBe('filters.sentiment.1: must not contain NUL (U+0000)');
    expect(issue({ nested: { 'k\ud800': 1 } })).toBe('filters.nested: keys must not contain a lone surrogate (U+D800 to U+DFFF; not valid Unicode)');
    expect(issue({ 'x\u0000': 1 })).toBe('filters: keys must not contain NUL (U+0000)');
    expect(issue(Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])))).toBe('filters: must have at most 50 keys');
    expect(issue([1])).toBe('filters: must be an object');
    expect(issue({ fine: [1, 'two', { three: true }] })).toBeNull();
  });
});
