import { type EventType, RESPONSE_STREAM_PREFIX } from '../domain/events';
import { type JobKinds, jobTriggerTypes } from '../domain/jobs';
import type { Projection } from '../eventstore/projection';
import { EMAIL_WORKER_TYPES } from './email';
import { ENTITY_QUALITY_WORKER_TYPES } from './entity-quality';
import { INVITATION_WORKER_TYPES } from './invitations';
import { type ExtractorChoice, observationWorkerTypes } from './observations';
import { RESPONSE_WORKER_TYPES } from './responses';

/** Every event type a worker consumes from the bus: the relay publishes these (a new worker adds its list here). */
export const busEventTypes = (extractor: ExtractorChoice, jobKinds: JobKinds): readonly EventType[] => [
  ...new Set([
    ...RESPONSE_WORKER_TYPES,
    ...observationWorkerTypes(extractor),
    ...jobTriggerTypes(jobKinds),
    ...EMAIL_WORKER_TYPES,
    ...INVITATION_WORKER_TYPES,
    ...ENTITY_QUALITY_WORKER_TYPES,
  ]),
];

/**
 * An imported answer is read with its import (ResponsesImported): only engine answers travel one by one, and those
 * are the ones in answer streams (an import has its own stream), so the relay does not even read the others.
 */
export const BUS_STREAM_PREFIXES: Projection['streamPrefixes'] = { ResponseRecorded: RESPONSE_STREAM_PREFIX };
