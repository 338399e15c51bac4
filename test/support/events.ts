import { randomUUID } from 'node:crypto';
import type { EventMetadata } from '../../src/domain/events';
import type { NewEvent } from '../../src/eventstore/port';

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

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
