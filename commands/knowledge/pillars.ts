import { z } from 'zod';
import { conflict, type DomainError, notFound } from '../../src/domain/errors';
import { label, text, WebsiteId } from '../../src/domain/schemas';
import type { Decision } from '../handle';
import { KNOWLEDGE_MESSAGES, type KnowledgeState, type PillarStatus } from './knowledge';

export const PILLAR_STATUSES = ['researching', 'draft', 'published', 'archived'] as const;
export const PillarStatusInput = z.enum(PILLAR_STATUSES, { error: `must be one of ${PILLAR_STATUSES.join(', ')}` });

const PillarName = label(200).describe('The pillar (subject area) name; unique per website, case-insensitively');
const Description = text().max(2000, 'must be at most 2000 characters');

export const CreatePillar = z.strictObject({
  website_id: WebsiteId,
  name: PillarName,
  description: Description.optional().describe('What the pillar covers (optional)'),
});
export type CreatePillar = z.output<typeof CreatePillar>;

export const UpdatePillar = z
  .strictObject({
    name: PillarName.optional(),
    description: Description.optional().describe('What the pillar covers'),
    status: PillarStatusInput.optional().describe(`The pillar's status: ${PILLAR_STATUSES.join(', ')}`),
  })
  .refine((u) => u.name !== undefined || u.description !== undefined || u.status !== undefined, {
    message: 'give at least one of name, description, status',
    path: ['name'],
  });
export type UpdatePillar = z.output<typeof UpdatePillar>;

export interface PillarCreatedResult {
  pillar_id: string;
  created: boolean;
}

/** Get-or-create: the same name in any case answers the existing pillar (created false) and appends nothing. */
export function decideCreatePillar(s: KnowledgeState, cmd: CreatePillar & { pillar_id: string }): Decision<PillarCreatedResult> | DomainError {
  const name = cmd.name.trim();
  const existing = s.names.get(name.toLowerCase());
  if (existing) return { events: [], result: { pillar_id: existing, created: false } };
  return {
    events: [{ type: 'PillarCreated', data: { pillar_id: cmd.pillar_id, website_id: cmd.website_id, name, description: cmd.description ?? '' } }],
    result: { pillar_id: cmd.pillar_id, created: true },
  };
}

/** Only the fields that change; a name another pillar of the website has (any case) is 409. */
export function decideUpdatePillar(s: KnowledgeState, pillarId: string, cmd: UpdatePillar): Decision<{ pillar_id: string }> | DomainError {
  const p = s.pillars.get(pillarId);
  if (!p) return notFound(KNOWLEDGE_MESSAGES.pillarNotFound);
  const data: { pillar_id: string; name?: string; description?: string; status?: PillarStatus } = { pillar_id: p.id };
  const name = cmd.name?.trim();
  if (name !== undefined && name !== p.name) {
    const other = s.names.get(name.toLowerCase());
    if (other && other !== p.id) return conflict(KNOWLEDGE_MESSAGES.pillarNameTaken);
    data.name = name;
  }
  if (cmd.description !== undefined && cmd.description !== p.description) data.description = cmd.description;
  if (cmd.status !== undefined && cmd.status !== p.status) data.status = cmd.status;
  const changed = Object.keys(data).length > 1;
  return { events: changed ? [{ type: 'PillarUpdated', data }] : [], result: { pillar_id: p.id } };
}

/** The research job's report: a researching pillar becomes draft; a report already applied is not applied again. */
export function decidePillarResearched(
  s: KnowledgeState,
  cmd: { pillar_id: string; job_id: string; facts_found: number },
): Decision<{ pillar_id: string }> | DomainError {
  const p = s.pillars.get(cmd.pillar_id);
  if (!p) return notFound(KNOWLEDGE_MESSAGES.pillarNotFound);
  if (p.researched_by.includes(cmd.job_id)) return { events: [], result: { pillar_id: p.id } };
  return { events: [{ type: 'PillarResearched', data: cmd }], result: { pillar_id: p.id } };
}
