import { conflict, type DomainError, notFound } from '../../src/domain/errors';
import { type CommandContext, type Decision, type Handled, handle } from '../handle';
import { CONTENT_NOT_FOUND, type ContentPipeline, type ContentStage, contentStream, pipelineAggregate } from './pipeline';
import { GENERATION_FAILED } from './publish-content';

export const BRIEF_NOT_READY = 'Brief is not ready';
export const NO_BRIEF = 'Content has no brief';

export interface ApproveBriefResult {
  content_id: string;
  stage: ContentStage | null;
}

/**
 * A brief waiting for approval (stage generated_brief) is approved: the job writes the article next. Approving it
 * again changes nothing; a brief not written yet, a failed generation or an item without a brief is refused.
 */
export function decideApproveBrief(s: ContentPipeline): Decision<ApproveBriefResult> | DomainError {
  if (!s.exists || !s.content_id) return notFound(CONTENT_NOT_FOUND);
  if (!s.request || s.request.type === 'optimize') return conflict(NO_BRIEF);
  if (s.stage === 'failed') return conflict(GENERATION_FAILED);
  if (s.brief_approved) return { events: [], result: { content_id: s.content_id, stage: s.stage } };
  if (s.stage !== 'generated_brief') return conflict(BRIEF_NOT_READY);
  return {
    events: [{ type: 'ContentBriefApproved', data: { content_id: s.content_id, auto: false } }],
    result: { content_id: s.content_id, stage: 'pending_article' },
  };
}

export function approveBrief(ctx: CommandContext, contentId: string): Promise<Handled<ApproveBriefResult> | DomainError> {
  return handle(ctx, contentStream(contentId), pipelineAggregate, decideApproveBrief);
}
