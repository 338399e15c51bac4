import type { AreaManifest } from './manifest';

/** Idempotent requests (Idempotency-Key, request_id). */
export const idempotency: AreaManifest = {
  notInFeed: [{ why: "bookkeeping of a request's Idempotency-Key: the change it admitted is the entry", types: ['RequestAdmitted'] }],
};
