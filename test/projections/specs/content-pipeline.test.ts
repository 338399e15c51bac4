import { randomUUID } from 'node:crypto';
import { describe, it } from 'vitest';
import { contentProjection } from '../../../projections/content';
import { streamOf, projectionSpec, T0, T1 } from '../../support/projection-spec';

const { site, given } = projectionSpec(contentProjection);
const content = streamOf('content');
const item = content.id;

const requested = content.on('ContentGenerationRequested', {
  content_id: item,
  website_id: site,
  type: 'generated',
  title: 'Best CRM for startups',
  url: '',
  normalized_url: '',
  topic_id: null,
  topic_name: null,
  prompt_ids: [],
  prompts: [],
  sheet_id: null,
  auto_approve_brief: false,
  mode: 'draft',
  model: 'chatgpt',
  brand: null,
  fact_review: null,
});
const brief = content.on('ContentBriefGenerated', {
  content_id: item,
  brief: 'Outline',
  model: 'chatgpt',
  version_id: randomUUID(),
  version_number: 1,
});
const approved = content.on('ContentBriefApproved', { content_id: item, auto: false });
const article = content.on(
  'ContentArticleGenerated',
  {
    content_id: item,
    body: '# Best CRM',
    meta_description: 'Which CRM',
    model: 'chatgpt',
    version_id: randomUUID(),
    version_number: 2,
    fact_ids: ['f1'],
  },
  T1,
);

describe('content pipeline in the content read model: a generated item, its stages and versions', () => {
  it('given nothing, when a generation is requested, then the item is pending its brief and running', async () => {
    await given()
      .when(requested)
      .then({
        rm_content: [
          {
            content_id: item,
            website_id: site,
            title: 'Best CRM for startups',
            type: 'generated',
            stage: 'pending_brief',
            pipeline_status: 'running',
            version_number: 0,
            created_at: T0,
          },
        ],
      });
  });

  it('given a brief approved, when the article is written, then the item is generated and each version keeps what it did not change', async () => {
    await given(requested, brief, approved)
      .when(article)
      .then({
        rm_content: [{ content_id: item, stage: 'generated', body: '# Best CRM', brief: 'Outline', version_number: 2, updated_at: T1 }],
        rm_content_versions: [
          { version_number: 1, label: 'Brief', change_type: 'brief', brief: 'Outline', body: null, fact_ids: [] },
          { version_number: 2, label: 'Article generated', change_type: 'generated', brief: 'Outline', body: '# Best CRM', fact_ids: ['f1'] },
        ],
      });
  });

  it('given a brief not yet generated, when an approval arrives, then the stage does not move', async () => {
    await given(requested)
      .when(approved)
      .then({ rm_content: [{ content_id: item, stage: 'pending_brief' }] });
  });

  it('given a generated article, when it is published, then the item is done at the URL with its publish time', async () => {
    await given(requested, brief, approved, article)
      .when(
        content.on('ContentPublished', {
          content_id: item,
          url: 'acme.example/crm',
          normalized_url: 'acme.example/crm',
          published_at: T1,
          already_published: false,
        }),
      )
      .then({ rm_content: [{ content_id: item, stage: 'done', url: 'acme.example/crm', mark_as_done_time: T1 }] });
  });

  it('given a running generation, when its job fails, then the item is failed with the message; a job of another stream changes nothing', async () => {
    await given(requested)
      .when({ ...content.failed('engine', 'the writer refused'), stream: `pitch-${item}` })
      .then({ rm_content: [{ content_id: item, stage: 'pending_brief', pipeline_status: 'running' }] });
    await given(requested)
      .when(content.failed('engine', 'the writer refused'))
      .then({ rm_content: [{ content_id: item, stage: 'failed', pipeline_status: 'failed', pipeline_error: 'the writer refused' }] });
  });

  it('given an item with versions, when it is deleted, then its versions go with it', async () => {
    await given(requested, brief)
      .when(content.on('ContentDeleted', { content_id: item, website_id: site }))
      .then({ rm_content: [], rm_content_versions: [] });
  });
});
