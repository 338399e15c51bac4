import { randomUUID } from 'node:crypto';
import { describe, it } from 'vitest';
import { activityProjection } from '../../../projections/activity';
import { feed } from '../../../src/areas';
import { event, projectionSpec, T0 } from '../../support/projection-spec';

const { org, site, given } = projectionSpec(activityProjection(feed));
const key = randomUUID();
const byKey = { actor: { kind: 'api_key' as const, user_id: null, api_key_id: key } };

describe('activity read model: the feed of changes to resources', () => {
  it('given nothing, when a topic is created through a key, then the feed has one entry of the website naming the topic and the key', async () => {
    const topic = randomUUID();
    await given()
      .when(event('TopicCreated', { topic_id: topic, name: 'Pricing' }, { meta: byKey }))
      .then({
        rm_activity: [
          {
            organization_id: org,
            website_id: site,
            entity_type: 'topic',
            change_type: 'created',
            entity_ids: [topic],
            via_api_key: true,
            api_key_id: key,
            actor_kind: 'api_key',
            created_at: T0,
          },
        ],
      });
  });

  it('given a topic with prompts, when it is deleted, then the entry lists the topic and its prompts; past 100 prompts, none (re-list)', async () => {
    const topic = randomUUID();
    const few = [randomUUID(), randomUUID()];
    const many = Array.from({ length: 100 }, () => randomUUID());
    await given()
      .when(
        event('TopicDeleted', { topic_id: topic, name: 'Pricing', soft_deleted_prompt_ids: few }),
        event('TopicDeleted', { topic_id: topic, name: 'Pricing', soft_deleted_prompt_ids: many }),
      )
      .then({
        rm_activity: {
          columns: ['change_type', 'entity_ids'],
          orderBy: 'seq',
          rows: [
            { change_type: 'deleted', entity_ids: [topic, ...few] },
            { change_type: 'deleted', entity_ids: null },
          ],
        },
      });
  });

  it('given an organization-level change, then its entry has no website; a website resumed reads "resumed"', async () => {
    await given()
      .when(event('ApiKeyRevoked', { api_key_id: key }), event('WebsiteStatusChanged', { website_id: site, status: 'active' }))
      .then({
        rm_activity: {
          orderBy: 'seq',
          rows: [
            { website_id: null, entity_type: 'api_key', change_type: 'revoked' },
            { website_id: site, entity_type: 'website', change_type: 'resumed' },
          ],
        },
      });
  });

  it('given jobs failing, then a discovery failure is an entry of its website and a probe failure is none', async () => {
    const job = randomUUID();
    await given()
      .when(
        event('JobFailed', { job_id: job, kind: 'discovery', error_kind: 'internal', message: 'engine down' }, { stream: `discovery-${job}` }),
        event('JobFailed', { job_id: randomUUID(), kind: 'probe', error_kind: 'internal', message: 'x' }, { stream: 'probe-1' }),
      )
      .then({ rm_activity: [{ website_id: site, entity_type: 'prompt_discovery_run', change_type: 'failed', entity_ids: [job] }] });
  });
});
