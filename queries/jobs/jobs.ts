import type { Knex } from 'knex';
import { z } from 'zod';
import type { JobKind } from '../../src/domain/jobs';
import { organizationRow } from '../access';
import { iso, isoOrNull } from '../timestamps';

/** A job as the jobs read model shows it: an area maps `status` to its own words (a pitch's `processing`). */
export const JobView = z.object({
  job_id: z.string(),
  kind: z.string(),
  website_id: z.string().nullable(),
  status: z.enum(['queued', 'running', 'succeeded', 'failed']),
  error_kind: z.string().nullable(),
  error: z.string().nullable(),
  requested_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
});
export type JobView = z.infer<typeof JobView>;

/** One job of an organization (null for another organization's, or none). */
export async function getJob(db: Knex, organizationId: string, kind: JobKind, jobId: string): Promise<JobView | null> {
  return (await organizationRow(db, 'rm_jobs', organizationId, { id: jobId, kind }, jobView)) ?? null;
}

const jobView = (r: any): JobView => ({
  job_id: r.id,
  kind: r.kind,
  website_id: r.website_id,
  status: r.status,
  error_kind: r.error_kind,
  error: r.error,
  requested_at: iso(r.requested_at),
  started_at: isoOrNull(r.started_at),
  finished_at: isoOrNull(r.finished_at),
});
