import { describe, expect, it } from 'vitest';
import { Catalog } from '../../commands/catalog/catalog';
import { decideCreateTopic } from '../../commands/catalog/create-topic';
import { decideDeleteTopic } from '../../commands/catalog/delete-topic';
import { given } from '../support/given';
import { promptAnswered, promptCreated, promptDeleted, topicCreated, topicDeleted, W } from './catalog-events';

describe('create topic', () => {
  it('given no topic of that name, then TopicCreated, not restored', () => {
    const { result } = given(Catalog, topicCreated('t0', 'Other'))
      .when((s) => decideCreateTopic(s, { website_id: W, name: 'Pricing', topic_id: 't1' }))
      .then([{ type: 'TopicCreated', data: { topic_id: 't1', name: 'Pricing' } }]);
    expect(result).toEqual({ id: 't1', restored: false });
  });

  it('given a live topic of that name in another case, then conflict with the existing topic', () => {
    given(Catalog, topicCreated('t1', 'Pricing'))
      .when((s) => decideCreateTopic(s, { website_id: W, name: 'pricing', topic_id: 't2' }))
      .then({ kind: 'conflict', message: 'Topic already exists', details: { existing: { id: 't1', name: 'Pricing' } } });
  });

  it('given a topic soft-deleted with its prompts, when its name is created again, then it and those prompts come back', () => {
    const { result } = given(
      Catalog,
      topicCreated('t1', 'Pricing'),
      promptCreated('p1', 't1'),
      promptCreated('p2', 't1', { status: 'paused' }),
      topicDeleted('t1', 'Pricing', ['p1', 'p2']),
    )
      .when((s) => decideCreateTopic(s, { website_id: W, name: '  PRICING ', topic_id: 'new' }))
      .then([{ type: 'TopicRestored', data: { topic_id: 't1', name: 'Pricing', restored_prompt_ids: ['p1', 'p2'] } }]);
    expect(result).toEqual({ id: 't1', restored: true });
  });

  it('given a topic soft-deleted without its prompts, then only the topic comes back (its prompts never left)', () => {
    given(Catalog, topicCreated('t1', 'Pricing'), promptCreated('p1', 't1'), topicDeleted('t1', 'Pricing'))
      .when((s) => decideCreateTopic(s, { website_id: W, name: 'Pricing', topic_id: 'new' }))
      .then([{ type: 'TopicRestored', data: { topic_id: 't1', name: 'Pricing', restored_prompt_ids: [] } }]);
  });

  it('given a restored topic, then its state is live again and its prompts are live', () => {
    const { state } = given(Catalog, topicCreated('t1', 'Pricing'), promptCreated('p1', 't1'), topicDeleted('t1', 'Pricing', ['p1']), {
      type: 'TopicRestored',
      data: { topic_id: 't1', name: 'Pricing', restored_prompt_ids: ['p1'] },
    })
      .when((s) => decideDeleteTopic(s, { website_id: W, topic_id: 't1', delete_prompts: true }))
      .then([{ type: 'TopicDeleted', data: { topic_id: 't1', name: 'Pricing', soft_deleted_prompt_ids: ['p1'] } }]);
    expect(state.topics.get('t1')?.deleted).toBe(false);
    expect(state.prompts.get('p1')?.soft_deleted).toBe(false);
  });
});

describe('delete topic', () => {
  const history = [
    topicCreated('t1', 'Pricing'),
    topicCreated('t2', 'Other'),
    promptCreated('p1', 't1'),
    promptCreated('p2', 't1', { status: 'paused' }),
    promptCreated('p3', 't2'),
    promptCreated('p4', 't1'),
    promptDeleted('p4', false),
    promptCreated('p5', 't1'),
    promptAnswered('p5'),
  ];

  it('given delete_prompts false (default), then only the topic is soft-deleted; its prompts keep going', () => {
    const { result } = given(Catalog, ...history)
      .when((s) => decideDeleteTopic(s, { website_id: W, topic_id: 't1' }))
      .then([{ type: 'TopicDeleted', data: { topic_id: 't1', name: 'Pricing', soft_deleted_prompt_ids: [] } }]);
    expect(result).toEqual({ success: true, name: 'Pricing', deleted_prompt_count: 0 });
  });

  it('given delete_prompts true, then every live prompt in it is soft-deleted, answered or not, active or paused', () => {
    const { result } = given(Catalog, ...history)
      .when((s) => decideDeleteTopic(s, { website_id: W, topic_id: 't1', delete_prompts: true }))
      .then([{ type: 'TopicDeleted', data: { topic_id: 't1', name: 'Pricing', soft_deleted_prompt_ids: ['p1', 'p2', 'p5'] } }]);
    expect(result).toEqual({ success: true, name: 'Pricing', deleted_prompt_count: 3 });
  });

  it('given a soft-deleted or unknown topic, then Topic not found', () => {
    given(Catalog, ...history, topicDeleted('t1', 'Pricing'))
      .when((s) => decideDeleteTopic(s, { website_id: W, topic_id: 't1' }))
      .then({ kind: 'not_found', message: 'Topic not found' });
    given(Catalog)
      .when((s) => decideDeleteTopic(s, { website_id: W, topic_id: 'nope' }))
      .then({ kind: 'not_found', message: 'Topic not found' });
  });
});
