import { type EventType, RESPONSE_STREAM_PREFIX } from '../domain/events';
import { type JobKinds, jobTriggerTypes } from '../domain/jobs';
import type { Projection } from '../eventstore/projection';
import { type ExtractorChoice, observationWorkerTypes } from './observations';
import { RESPONSE_WORKER_TYPES } from './responses';

/** The event types the core workers consume from the bus (answers, observations, jobs); an area's worker names its own in its manifest. */
export const busEventTypes = (extractor: ExtractorChoice, jobKinds: JobKinds): readonly EventType[] => [
  ...new Set([...RESPONSE_WORKER_TYPES, ...observationWorkerTypes(extractor), ...jobTriggerTypes(jobKinds)]),
];

/**
 * An imported answer is read with its import (ResponsesImported): only engine answers travel one by one, and those
 * are the ones in answer streams (an import has its own stream), so the relay does not even read the others.
 */
export const BUS_STREAM_PREFIXES: Projection['streamPrefixes'] = { ResponseRecorded: RESPONSE_STREAM_PREFIX };
