import { randomUUID } from 'node:crypto';
import type { EventData, EventMetadata } from '../../src/domain/events';
import type { NewEvent } from '../../src/eventstore/port';
import { MODEL_IDS } from '../../src/domain/models';

export const testMetadata = (over: Partial<EventMetadata> = {}): EventMetadata => ({
  organization_id: 'org-test',
  website_id: null,
  actor: { kind: 'system', user_id: null, api_key_id: null },
  correlation_id: randomUUID(),
  causation_id: null,
  time: new Date().toISOString(),
  ...over,
});

/** A catalogue-valid event (ApiKeyRevoked carries one string), handy where the payload doesn't matter. */
export const anEvent = (over: Partial<NewEvent> = {}): NewEvent => ({
  id: randomUUID(),
  type: 'ApiKeyRevoked',
  data: { api_key_id: randomUUID() },
  metadata: testMetadata(),
  ...over,
});

/** A unit of a run as ResponseRequested carries it: the first model on 2026-03-01, no location, persona or schedule, answered when run. */
export const aUnit = (
  ids: Pick<EventData<'ResponseRequested'>, 'request_id' | 'run_id' | 'website_id' | 'prompt_id'>,
): EventData<'ResponseRequested'> => ({
  ...ids,
  model: MODEL_IDS[0],
  location_id: null,
  persona_id: null,
  schedule_id: null,
  day: '2026-03-01',
  run_at: null,
});

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An engine's answer as ResponseRecorded carries it: the first model, no location, persona or schedule, no citation or product. */
export const anAnswer = (
  ids: Pick<EventData<'ResponseRecorded'>, 'response_id' | 'website_id' | 'prompt_id'> &
    Partial<Pick<EventData<'ResponseRecorded'>, 'run_id' | 'request_id'>>,
  text: string,
  over: Partial<EventData<'ResponseRecorded'>> = {},
): EventData<'ResponseRecorded'> => ({
  model: MODEL_IDS[0],
  location_id: null,
  persona_id: null,
  schedule_id: null,
  run_id: null,
  request_id: null,
  external_id: null,
  run_at: '2026-03-01T10:00:00.000Z',
  text,
  citations: [],
  products: [],
  source: 'engine',
  observations_supplied: false,
  provider_model: null,
  latency_ms: null,
  ...ids,
  ...over,
});

/**
 * An imported answer from year 0 in UTC (run_at '0000-12-31T23:00:00.000Z', as '0001-01-01T00:00:00+01:00' reads):
 * one the answers read model cannot hold, appended to the store directly by the tests of what is set aside.
 */
export const answerFromYearZero = (
  ids: { response_id: string; website_id: string; prompt_id: string },
  text: string,
): EventData<'ResponseRecorded'> => anAnswer(ids, text, { model: 'chatgpt', run_at: '0000-12-31T23:00:00.000Z', source: 'import' });
