import { randomUUID } from 'node:crypto';
import { describe, it } from 'vitest';
import { catalogProjection } from '../../../projections/catalog';
import { event, projectionSpec, T0, T1 } from '../../support/projection-spec';

const { site, given } = projectionSpec(catalogProjection);
const other = randomUUID();

const topic = randomUUID();
const prompt = randomUUID();
const topicCreated = event('TopicCreated', { topic_id: topic, name: 'Pricing' }, { stream: `catalog-${site}` });
const promptCreated = event(
  'PromptCreated',
  { prompt_id: prompt, text: 'best crm?', topic_id: topic, type: 'branded', status: 'active', tags: ['crm'] },
  { stream: `catalog-${site}` },
);

describe('catalog read model: a website catalogue of topics, prompts and competitors', () => {
  it('given a topic, when a prompt is created in it, then the prompt is listed under the website with its fields', async () => {
    await given(topicCreated)
      .when(promptCreated)
      .then({
        rm_topics: [{ id: topic, website_id: site, name: 'Pricing', deleted_at: null }],
        rm_prompts: [
          {
            id: prompt,
            website_id: site,
            text: 'best crm?',
            topic_id: topic,
            type: 'branded',
            status: 'active',
            tags: ['crm'],
            has_answers: false,
            created_at: T0,
            updated_at: T0,
          },
        ],
      });
  });

  it('given a prompt, when it is updated, then only the fields given change and updated_at moves', async () => {
    await given(topicCreated, promptCreated)
      .when(event('PromptUpdated', { prompt_id: prompt, status: 'paused' }, { meta: { time: T1 } }))
      .then({ rm_prompts: [{ id: prompt, text: 'best crm?', status: 'paused', tags: ['crm'], created_at: T0, updated_at: T1 }] });
  });

  it('given a topic with its prompt, when the topic is deleted with its prompts, then both keep their rows marked deleted', async () => {
    await given(topicCreated, promptCreated)
      .when(event('TopicDeleted', { topic_id: topic, name: 'Pricing', soft_deleted_prompt_ids: [prompt] }, { meta: { time: T1 } }))
      .then({ rm_topics: [{ id: topic, deleted_at: T1 }], rm_prompts: [{ id: prompt, soft_deleted_at: T1 }] });
  });

  it('given a deleted topic, when it is restored, then it and the prompts deleted with it are live again', async () => {
    await given(topicCreated, promptCreated, event('TopicDeleted', { topic_id: topic, name: 'Pricing', soft_deleted_prompt_ids: [prompt] }))
      .when(event('TopicRestored', { topic_id: topic, name: 'Pricing', restored_prompt_ids: [prompt] }, { meta: { time: T1 } }))
      .then({ rm_topics: [{ id: topic, deleted_at: null, updated_at: T1 }], rm_prompts: [{ id: prompt, soft_deleted_at: null }] });
  });

  it('given a prompt, when it is deleted for good, then its row is gone; deleted softly, then it is kept and marked', async () => {
    await given(topicCreated, promptCreated)
      .when(event('PromptDeleted', { prompt_id: prompt, soft_deleted: false }))
      .then({ rm_prompts: [] });
    await given(topicCreated, promptCreated)
      .when(event('PromptDeleted', { prompt_id: prompt, soft_deleted: true }, { meta: { time: T1 } }))
      .then({ rm_prompts: [{ id: prompt, soft_deleted_at: T1 }] });
  });

  it('given a prompt, when it is first answered, then it is marked as having answers', async () => {
    await given(topicCreated, promptCreated)
      .when(event('PromptAnswered', { prompt_id: prompt }))
      .then({ rm_prompts: [{ id: prompt, has_answers: true }] });
  });

  it('given a competitor, when it is renamed, given new identifiers, then removed, then its row says each', async () => {
    const c = randomUUID();
    const added = event('CompetitorAdded', {
      competitor_id: c,
      name: 'Rival',
      url: 'https://rival.example/',
      normalized_url: 'rival.example',
      identifiers: ['Rival'],
    });
    await given(added)
      .when(
        event('CompetitorRenamed', { competitor_id: c, name: 'Rival Inc' }),
        event('CompetitorIdentifiersChanged', { competitor_id: c, identifiers: ['Rival', 'RivalCo'] }),
        event('CompetitorRemoved', { competitor_id: c }, { meta: { time: T1 } }),
      )
      .then({ rm_competitors: [{ id: c, website_id: site, name: 'Rival Inc', identifiers: ['Rival', 'RivalCo'], removed_at: T1 }] });
  });

  it('given two websites each with a topic, when one deletes its topic, then the other website topic is untouched', async () => {
    const theirs = randomUUID();
    await given(
      topicCreated,
      event('TopicCreated', { topic_id: theirs, name: 'Pricing' }, { stream: `catalog-${other}`, meta: { website_id: other } }),
    )
      .when(event('TopicDeleted', { topic_id: topic, name: 'Pricing', soft_deleted_prompt_ids: [] }, { meta: { time: T1 } }))
      .then({
        rm_topics: { columns: ['website_id', 'deleted_at'], where: { website_id: other }, rows: [{ website_id: other, deleted_at: null }] },
      });
  });

  it('given a saved view, when its filters change, then the view keeps its name and has the new filters', async () => {
    const v = randomUUID();
    await given(event('SavedViewCreated', { view_id: v, name: 'Mine', filters: { models: ['chatgpt'] } }))
      .when(event('SavedViewUpdated', { view_id: v, filters: { models: ['gemini'] } }))
      .then({ rm_saved_views: [{ id: v, name: 'Mine', filters: { models: ['gemini'] } }] });
  });
});
