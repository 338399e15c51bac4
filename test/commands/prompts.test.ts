import { describe, expect, it } from 'vitest';
import { Catalog } from '../../commands/catalog/catalog';
import { decideCreatePrompt } from '../../commands/catalog/create-prompt';
import { decideDeletePrompt } from '../../commands/catalog/delete-prompt';
import { decideMarkPromptAnswered } from '../../commands/catalog/mark-prompt-answered';
import { decideUpdatePrompt } from '../../commands/catalog/update-prompt';
import { given } from '../support/given';
import { promptAnswered, promptCreated, promptDeleted, topicCreated, topicDeleted, W } from './catalog-events';

describe('create prompt', () => {
  it('given defaults, then a non_branded active prompt without tags', () => {
    given(Catalog)
      .when((s) => decideCreatePrompt(s, { website_id: W, prompt_id: 'p1', text: 'best widgets' }))
      .then([
        { type: 'PromptCreated', data: { prompt_id: 'p1', text: 'best widgets', topic_id: null, type: 'non_branded', status: 'active', tags: [] } },
      ]);
  });

  it('given a live topic, then the prompt is filed under it; a deleted or unknown topic is refused naming topic_id', () => {
    given(Catalog, topicCreated('t1'))
      .when((s) =>
        decideCreatePrompt(s, {
          website_id: W,
          prompt_id: 'p1',
          text: 'x',
          topic_id: 't1',
          type: 'branded',
          status: 'paused',
          tags: ['a', 'a', 'b'],
        }),
      )
      .then([{ type: 'PromptCreated', data: { prompt_id: 'p1', text: 'x', topic_id: 't1', type: 'branded', status: 'paused', tags: ['a', 'b'] } }]);
    given(Catalog, topicCreated('t1'), topicDeleted('t1', 't1'))
      .when((s) => decideCreatePrompt(s, { website_id: W, prompt_id: 'p1', text: 'x', topic_id: 't1' }))
      .then({ kind: 'invalid', message: 'topic_id: Topic not found' });
    given(Catalog)
      .when((s) => decideCreatePrompt(s, { website_id: W, prompt_id: 'p1', text: 'x', topic_id: 'nope' }))
      .then({ kind: 'invalid', message: 'topic_id: Topic not found' });
  });
});

describe('update prompt', () => {
  it('given changes, then one PromptUpdated with only the changed fields', () => {
    given(Catalog, topicCreated('t1'), promptCreated('p1', 't1', { tags: ['a'] }))
      .when((s) => decideUpdatePrompt(s, 'p1', { website_id: W, status: 'paused', type: 'non_branded', tags: ['a'], topic_id: null }))
      .then([{ type: 'PromptUpdated', data: { prompt_id: 'p1', status: 'paused', topic_id: null } }]);
  });

  it('given nothing that differs, then nothing is appended', () => {
    given(Catalog, promptCreated('p1'))
      .when((s) => decideUpdatePrompt(s, 'p1', { website_id: W, status: 'active' }))
      .then([]);
  });

  it('given a soft- or hard-deleted prompt, then Prompt not found', () => {
    for (const soft of [true, false]) {
      given(Catalog, promptCreated('p1'), promptDeleted('p1', soft))
        .when((s) => decideUpdatePrompt(s, 'p1', { website_id: W, status: 'paused' }))
        .then({ kind: 'not_found', message: 'Prompt not found' });
    }
  });
});

describe('delete prompt', () => {
  it('given a prompt without answers, then it is hard-deleted', () => {
    const { result } = given(Catalog, promptCreated('p1'))
      .when((s) => decideDeletePrompt(s, 'p1'))
      .then([{ type: 'PromptDeleted', data: { prompt_id: 'p1', soft_deleted: false } }]);
    expect(result).toEqual({ success: true, soft_deleted: false });
  });

  it('given a prompt with answers, then it is soft-deleted', () => {
    const { result } = given(Catalog, promptCreated('p1'), promptAnswered('p1'))
      .when((s) => decideDeletePrompt(s, 'p1'))
      .then([{ type: 'PromptDeleted', data: { prompt_id: 'p1', soft_deleted: true } }]);
    expect(result).toEqual({ success: true, soft_deleted: true });
  });

  it('given a deleted, topic-deleted or unknown prompt, then Prompt not found', () => {
    const notFound = { kind: 'not_found', message: 'Prompt not found' } as const;
    given(Catalog, promptCreated('p1'), promptDeleted('p1', false))
      .when((s) => decideDeletePrompt(s, 'p1'))
      .then(notFound);
    given(Catalog, promptCreated('p1'), promptAnswered('p1'), promptDeleted('p1', true))
      .when((s) => decideDeletePrompt(s, 'p1'))
      .then(notFound);
    given(Catalog, topicCreated('t1'), promptCreated('p1', 't1'), topicDeleted('t1', 't1', ['p1']))
      .when((s) => decideDeletePrompt(s, 'p1'))
      .then(notFound);
    given(Catalog)
      .when((s) => decideDeletePrompt(s, 'p1'))
      .then(notFound);
  });

  it('given a topic deleted without its prompts, then its prompts can still be deleted', () => {
    given(Catalog, topicCreated('t1'), promptCreated('p1', 't1'), topicDeleted('t1', 't1'))
      .when((s) => decideDeletePrompt(s, 'p1'))
      .then([{ type: 'PromptDeleted', data: { prompt_id: 'p1', soft_deleted: false } }]);
  });
});

describe('first-answer marker', () => {
  it('given a prompt without answers, then PromptAnswered once; then nothing', () => {
    given(Catalog, promptCreated('p1'))
      .when((s) => decideMarkPromptAnswered(s, 'p1'))
      .then([{ type: 'PromptAnswered', data: { prompt_id: 'p1' } }]);
    const { result } = given(Catalog, promptCreated('p1'), promptAnswered('p1'))
      .when((s) => decideMarkPromptAnswered(s, 'p1'))
      .then([]);
    expect(result).toEqual({ prompt_id: 'p1', first: false });
  });

  it('given a hard-deleted or unknown prompt, then not found (the answer is not recorded)', () => {
    given(Catalog, promptCreated('p1'), promptDeleted('p1', false))
      .when((s) => decideMarkPromptAnswered(s, 'p1'))
      .then({ kind: 'not_found', message: 'Prompt not found' });
    given(Catalog)
      .when((s) => decideMarkPromptAnswered(s, 'p1'))
      .then({ kind: 'not_found', message: 'Prompt not found' });
  });

  it('given a prompt soft-deleted with its topic, then an answer still in flight is marked (history is kept)', () => {
    given(Catalog, topicCreated('t1'), promptCreated('p1', 't1'), topicDeleted('t1', 't1', ['p1']))
      .when((s) => decideMarkPromptAnswered(s, 'p1'))
      .then([{ type: 'PromptAnswered', data: { prompt_id: 'p1' } }]);
  });
});
