import { isDeadLettered } from '../../../queries/health/dead-letters';
import type { Reads } from '../route';
import { type Caller, dbOf } from './caller';

/**
 * A read's answer, flagged `stale: true` when a read model it reads has set the website aside (an event it could not
 * apply: the website's later data waits behind it, see /readyz). REST adds the `x-aivis-stale: 1` header (mount).
 */
export async function flagStale<T extends object>(c: Caller, websiteId: string, reads: Reads, body: T): Promise<T | (T & { stale: true })> {
  return (await isDeadLettered(dbOf(c), websiteId, reads)) ? { ...body, stale: true as const } : body;
}
