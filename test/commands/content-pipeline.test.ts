import { describe, expect, it } from 'vitest';
import { decideApproveBrief } from '../../commands/content/approve-brief';
import { applyEdits, decideEdit, EditContent } from '../../commands/content/edit-content';
import { type ContentPipeline, pipelineAggregate, wordCount } from '../../commands/content/pipeline';
import { foldEvents } from '../../commands/handle';
import { BRIEF_NOT_APPROVED, decidePublish, GENERATION_FAILED, NOT_FINISHED, REVIEW_RUNNING } from '../../commands/content/publish-content';
import type { DomainEvent } from '../../src/domain/events';
import { given } from '../support/given';
import {
  briefApproved,
  briefGenerated,
  C,
  finishedArticle,
  jobFailed,
  jobStarted,
  jobSucceeded,
  optimizeRequested,
  pageFetched,
  publishedAt,
  requested,
  reviewed,
} from './content-events';

const NOW = new Date('2026-11-20T10:00:00.000Z');
const LATER = new Date('2026-11-25T08:00:00.000Z');
const publish =
  (url: string, now = NOW) =>
  (s: ContentPipeline) =>
    decidePublish(s, { url }, now);
const stateOf = (...events: DomainEvent[]) => foldEvents(pipelineAggregate, events);

describe('content pipeline: stages and statuses', () => {
  it('given a generation requested, then pending_brief and running', () => {
    const s = stateOf(requested());
    expect([s.stage, s.pipeline_status]).toEqual(['pending_brief', 'running']);
  });
  it('given its brief written, then generated_brief, still running (waiting for the approval)', () => {
    const s = stateOf(requested(), jobStarted(), briefGenerated());
    expect([s.stage, s.pipeline_status, s.brief_approved]).toEqual(['generated_brief', 'running', false]);
  });
  it('given the brief approved, then pending_article', () => {
    expect(stateOf(requested(), briefGenerated(), briefApproved()).stage).toBe('pending_article');
  });
  it('given the article written and the job ended, then generated and succeeded, with the article as the draft at version 2', () => {
    const s = stateOf(...finishedArticle('The body.'));
    expect([s.stage, s.pipeline_status, s.body, s.version_number]).toEqual(['generated', 'succeeded', 'The body.', 2]);
  });
  it('given the job failed, then stage failed and status failed, with the reason', () => {
    const s = stateOf(requested(), jobStarted(), jobFailed('The writer failed: quota'));
    expect([s.stage, s.pipeline_status, s.failure]).toEqual(['failed', 'failed', 'The writer failed: quota']);
  });
  it('given an optimize generation, then pending and running while its review runs, then pending and succeeded', () => {
    expect([stateOf(optimizeRequested()).stage, stateOf(optimizeRequested()).pipeline_status]).toEqual(['pending', 'running']);
    const fetched = stateOf(optimizeRequested(), jobStarted(), pageFetched());
    expect([fetched.stage, fetched.pipeline_status, fetched.body]).toEqual(['pending', 'running', 'The live page text.']);
    const done = stateOf(optimizeRequested(), jobStarted(), pageFetched(), reviewed(), jobSucceeded());
    expect([done.stage, done.pipeline_status, done.body]).toEqual(['pending', 'succeeded', 'The reviewed page text, better.']);
  });
  it('given an optimize item, then its live URL is stored without the protocol', () => {
    expect(stateOf(optimizeRequested('https://www.acme.com/crm?utm_source=x')).url).toBe('www.acme.com/crm?utm_source=x');
  });
});

describe('brief approval', () => {
  it('given a brief waiting, when approved, then ContentBriefApproved and pending_article', () => {
    const { result } = given(pipelineAggregate, requested(), briefGenerated())
      .when(decideApproveBrief)
      .then([{ type: 'ContentBriefApproved', data: { content_id: C, auto: false } }]);
    expect(result).toEqual({ content_id: C, stage: 'pending_article' });
  });
  it('given a brief approved already, when approved again, then nothing new', () => {
    given(pipelineAggregate, requested(), briefGenerated(), briefApproved(true)).when(decideApproveBrief).then([]);
  });
  it('given no brief yet, then 409 Brief is not ready', () => {
    given(pipelineAggregate, requested()).when(decideApproveBrief).then({ kind: 'conflict', message: 'Brief is not ready' });
  });
  it('given an optimize item, then 409 Content has no brief', () => {
    given(pipelineAggregate, optimizeRequested()).when(decideApproveBrief).then({ kind: 'conflict', message: 'Content has no brief' });
  });
  it('given no item, then 404', () => {
    given(pipelineAggregate).when(decideApproveBrief).then({ kind: 'not_found', message: 'Content not found' });
  });
});

describe('publish: the state table, row by row', () => {
  it('given a finished article (generated), when published, then done, the publish time stamped, the URL the join key', () => {
    const { result } = given(pipelineAggregate, ...finishedArticle())
      .when(publish('https://www.acme.com/blog/crm/?utm_source=news'))
      .then([
        {
          type: 'ContentPublished',
          data: {
            content_id: C,
            url: 'www.acme.com/blog/crm/?utm_source=news',
            normalized_url: 'acme.com/blog/crm',
            published_at: NOW.toISOString(),
            already_published: false,
          },
        },
      ]);
    expect(result).toEqual({
      content_id: C,
      url: 'www.acme.com/blog/crm/?utm_source=news',
      normalized_url: 'acme.com/blog/crm',
      stage: 'done',
      mark_as_done_time: NOW.toISOString(),
      already_published: false,
    });
  });

  it('given an Optimize draft whose review has finished, when published with its live URL, then recorded as published', () => {
    given(pipelineAggregate, optimizeRequested(), jobStarted(), pageFetched(), reviewed(), jobSucceeded())
      .when(publish('https://acme.com/crm'))
      .then((events) => expect(events.map((e) => e.type)).toEqual(['ContentPublished']));
  });

  it.each([
    {
      state: 'an Optimize draft whose review is running',
      history: () => [optimizeRequested(), jobStarted(), pageFetched()],
      message: REVIEW_RUNNING,
    },
    { state: 'a brief waiting for approval', history: () => [requested(), jobStarted(), briefGenerated()], message: BRIEF_NOT_APPROVED },
    { state: 'a brief not written yet', history: () => [requested()], message: NOT_FINISHED },
    { state: 'an article being written', history: () => [requested(), briefGenerated(), briefApproved()], message: NOT_FINISHED },
    { state: 'a failed generation', history: () => [requested(), jobStarted(), jobFailed()], message: GENERATION_FAILED },
  ])('given $state, when published, then 409 $message', ({ history, message }) => {
    given(pipelineAggregate, ...history())
      .when(publish('https://acme.com/x'))
      .then({ kind: 'conflict', message });
  });

  it('given a published item, when the same URL is sent again, then already_published, nothing recorded, the first time kept', () => {
    const { result } = given(pipelineAggregate, ...finishedArticle(), publishedAt('acme.com/a', NOW.toISOString()))
      .when(publish('https://acme.com/a', LATER))
      .then([]);
    expect(result).toMatchObject({ already_published: true, mark_as_done_time: NOW.toISOString(), stage: 'done' });
  });

  it('given a published item, when another URL is sent, then only the URL changes: the original publish time is kept', () => {
    const { result } = given(pipelineAggregate, ...finishedArticle(), publishedAt('acme.com/a', NOW.toISOString()))
      .when(publish('acme.com/b', LATER))
      .then([
        {
          type: 'ContentPublished',
          data: { content_id: C, url: 'acme.com/b', normalized_url: 'acme.com/b', published_at: NOW.toISOString(), already_published: true },
        },
      ]);
    expect(result).toMatchObject({ url: 'acme.com/b', already_published: true, mark_as_done_time: NOW.toISOString() });
  });

  it('given a URL that is not one, then 400', () => {
    given(pipelineAggregate, ...finishedArticle())
      .when(publish('not a url at all'))
      .then({ kind: 'invalid', message: 'url must be a URL (a host with an optional path)' });
  });

  it('given no such item, then 404', () => {
    given(pipelineAggregate).when(publish('https://acme.com/x')).then({ kind: 'not_found', message: 'Content not found' });
  });
});

describe('edit: exact replacements', () => {
  const body = 'Alpha beta gamma.\n\nDelta alpha epsilon.';
  it('given edits that each match once, then applied in order to the body the previous ones left', () => {
    // the second find only exists once the first edit has been applied
    expect(
      applyEdits(body, [
        { find: 'beta', replace: 'BETA zeta' },
        { find: 'BETA zeta gamma', replace: 'done' },
      ]),
    ).toEqual({ body: 'Alpha done.\n\nDelta alpha epsilon.' });
  });
  it('given a find that matches nowhere, then 400 naming the edit', () => {
    expect(
      applyEdits(body, [
        { find: 'beta', replace: 'b' },
        { find: 'omega', replace: 'o' },
      ]),
    ).toEqual({
      kind: 'invalid',
      message: 'edits[1].find does not match the current body',
    });
  });
  it('given a find that matches twice (even overlapping), then 400 naming the edit', () => {
    expect(applyEdits(body, [{ find: 'lpha', replace: 'x' }])).toMatchObject({
      kind: 'invalid',
      message: expect.stringMatching(/^edits\[0\]\.find matches the current body more than once/),
    });
    expect(applyEdits('aaa', [{ find: 'aa', replace: 'b' }])).toMatchObject({ kind: 'invalid' });
  });
  it('given a finished article, when edited, then one ContentEdited with the next version number and the new word count', () => {
    const { result } = given(pipelineAggregate, ...finishedArticle(body))
      .when((s) => decideEdit(s, EditContent.parse({ edits: [{ find: 'gamma', replace: 'gamma and more words' }], expected_version_number: 2 })))
      .then((events) => {
        expect(events).toHaveLength(1);
        expect(events[0]).toMatchObject({
          type: 'ContentEdited',
          data: { body: 'Alpha beta gamma and more words.\n\nDelta alpha epsilon.', edit_count: 1, version_number: 3 },
        });
      });
    expect(result).toMatchObject({ version_number: 3, body_word_count: 9 });
  });
  it('given a stale expected_version_number, then 409 and nothing', () => {
    given(pipelineAggregate, ...finishedArticle(body))
      .when((s) => decideEdit(s, EditContent.parse({ edits: [{ find: 'gamma', replace: 'g' }], expected_version_number: 1 })))
      .then({ kind: 'conflict', message: 'expected_version_number 1 is stale: the current version is 2', details: { version_number: 2 } });
  });
  it('given no draft yet (a brief waiting), then 409 Content is not finished', () => {
    given(pipelineAggregate, requested(), briefGenerated())
      .when((s) => decideEdit(s, EditContent.parse({ edits: [{ find: 'a', replace: 'b' }] })))
      .then({ kind: 'conflict', message: NOT_FINISHED });
  });
  it('given an Optimize review running, then 409 Review is running', () => {
    given(pipelineAggregate, optimizeRequested(), jobStarted(), pageFetched())
      .when((s) => decideEdit(s, EditContent.parse({ edits: [{ find: 'live', replace: 'b' }] })))
      .then({ kind: 'conflict', message: REVIEW_RUNNING });
  });
  it('given 0 or 21 edits, or an empty find, then the input is refused naming the field', () => {
    expect(EditContent.safeParse({ edits: [] }).error?.issues[0].path).toEqual(['edits']);
    const many = Array.from({ length: 21 }, (_, i) => ({ find: `f${i}`, replace: '' }));
    expect(EditContent.safeParse({ edits: many }).error?.issues[0].path).toEqual(['edits']);
    expect(EditContent.safeParse({ edits: [{ find: '', replace: 'x' }] }).error?.issues[0].path).toEqual(['edits', 0, 'find']);
    expect(EditContent.safeParse({ edits: Array.from({ length: 20 }, (_, i) => ({ find: `f${i}`, replace: '' })) }).success).toBe(true);
  });
});

describe('word counts', () => {
  it('counts words, not Markdown', () => {
    expect(wordCount("# A title\n\n- one item, **bold** text; don't split well-known words 2026")).toBe(11);
    expect(wordCount('')).toBe(0);
    expect(wordCount(null)).toBe(0);
  });
});
