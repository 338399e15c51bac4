import type { DomainEvent, EventData } from '../../src/domain/events';
import { versionId } from '../../commands/content/pipeline';
import type { ContentGenerationRequest } from '../../commands/content/generate-content';

/** Events of one content item's stream, for the pipeline's given/when/then tests. */
export const C = '0b7e3c1e-4d55-4a8e-9a63-1d2f6c1a0c01';
export const WEBSITE = '5d0c2a55-1f0e-4b1a-8f7e-2b9e5c0d7a11';

/** A generation request for `website_id` (a draft article about CRMs for Acme), with `over` changed. */
export const generationRequest = (website_id: string, over: Partial<ContentGenerationRequest> = {}): ContentGenerationRequest => ({
  website_id,
  type: 'generated',
  title: 'Best CRM for small teams',
  url: null,
  normalized_url: null,
  topic_id: null,
  topic_name: 'CRM',
  prompt_ids: [],
  prompts: ['What is the best CRM for a small team?'],
  sheet_id: null,
  auto_approve_brief: false,
  mode: 'draft',
  model: 'claude',
  brand: { name: 'Acme', domain: 'acme.com' },
  fact_review: null,
  ...over,
});

export const requested = (over: Partial<EventData<'ContentGenerationRequested'>> = {}): DomainEvent => ({
  type: 'ContentGenerationRequested',
  data: { content_id: C, ...generationRequest(WEBSITE), ...over },
});
export const optimizeRequested = (url = 'https://acme.com/crm') =>
  requested({ type: 'optimize', url, normalized_url: url.replace(/^https?:\/\//, '') });
export const jobStarted = (): DomainEvent => ({ type: 'JobStarted', data: { job_id: C, kind: 'content' } });
export const briefGenerated = (n = 1, brief = '# Brief\n\n1. One\n2. Two'): DomainEvent => ({
  type: 'ContentBriefGenerated',
  data: { content_id: C, brief, model: 'claude', version_id: versionId(C, n), version_number: n },
});
export const briefApproved = (auto = false): DomainEvent => ({ type: 'ContentBriefApproved', data: { content_id: C, auto } });
export const articleGenerated = (n = 2, body = 'Intro words here.\n\nThe body of the article, with alpha and beta.'): DomainEvent => ({
  type: 'ContentArticleGenerated',
  data: { content_id: C, body, meta_description: 'Intro.', model: 'claude', version_id: versionId(C, n), version_number: n },
});
export const pageFetched = (n = 1, body = 'The live page text.'): DomainEvent => ({
  type: 'ContentPageFetched',
  data: { content_id: C, url: 'https://acme.com/crm', http_status: 200, body, version_id: versionId(C, n), version_number: n },
});
export const reviewed = (n = 2, body = 'The reviewed page text, better.'): DomainEvent => ({
  type: 'ContentReviewed',
  data: { content_id: C, body, meta_description: 'Better.', model: 'claude', version_id: versionId(C, n), version_number: n },
});
export const jobSucceeded = (): DomainEvent => ({ type: 'JobSucceeded', data: { job_id: C, kind: 'content' } });
export const jobFailed = (message = 'The writer failed: refused'): DomainEvent => ({
  type: 'JobFailed',
  data: { job_id: C, kind: 'content', error_kind: 'writer_failed', message },
});
export const publishedAt = (url: string, at: string, already = false): DomainEvent => ({
  type: 'ContentPublished',
  data: { content_id: C, url, normalized_url: url, published_at: at, already_published: already },
});

/** A finished article: requested, brief written and approved, article written, job succeeded. */
export const finishedArticle = (body?: string): DomainEvent[] => [
  requested(),
  jobStarted(),
  briefGenerated(),
  briefApproved(),
  articleGenerated(2, body),
  jobSucceeded(),
];
