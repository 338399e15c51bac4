import { describe, expect, it } from 'vitest';
import { feed } from '../../src/areas';

/** The activity feed shows an SEO job and a discovery run from creation to their end, failure included. */
const failed = (kind: string) =>
  feed.JobFailed!({
    type: 'JobFailed',
    data: { job_id: 'j1', kind, error_kind: 'internal', message: 'engine down' },
  } as Parameters<NonNullable<typeof feed.JobFailed>>[0]);

describe('activity feed: job failures', () => {
  it('given a failed SEO job or discovery run, then a `failed` entry of its entity type on its website (the website from the metadata)', () => {
    expect(failed('seo')).toEqual({ entity_type: 'seo_recommendation_job', change_type: 'failed', entity_ids: ['j1'] });
    expect(failed('discovery')).toEqual({ entity_type: 'prompt_discovery_run', change_type: 'failed', entity_ids: ['j1'] });
  });

  it('given a failed pitch, then an organization-level entry; a kind the feed does not show, none', () => {
    expect(failed('pitch')).toEqual({ entity_type: 'pitch', change_type: 'failed', entity_ids: ['j1'], website_id: null });
    expect(failed('probe')).toBeNull();
  });
});
