import { z } from 'zod';
import { type DomainError, notFound } from '../../src/domain/errors';
import type { DomainEvent } from '../../src/domain/events';
import { type CommandContext, type Decision, handle } from '../handle';
import { Organization, type OrganizationState, organizationStream, type WebsiteState } from '../organizations/organization';
import { externalIdTaken } from './create-website';
import { ExternalId } from './website-input';

export const UpdateWebsite = z
  .strictObject({
    external_id: ExternalId.nullable().optional(),
    status: z.enum(['active', 'paused'], { error: "must be 'active' or 'paused'" }).optional(),
  })
  .refine((b) => b.external_id !== undefined || b.status !== undefined, { message: 'external_id or status is required', path: [] });
export type UpdateWebsite = z.infer<typeof UpdateWebsite>;

/** external_id: sets, replaces or (null) clears, also on deleted websites; status: pause or resume. */
export function decideUpdateWebsite(s: OrganizationState, websiteId: string, cmd: UpdateWebsite): Decision<WebsiteState> | DomainError {
  const w = s.websites.get(websiteId);
  if (!w) return notFound('Website not found');
  const events: DomainEvent[] = [];
  if (cmd.external_id !== undefined && cmd.external_id !== w.external_id) {
    if (cmd.external_id !== null) {
      const taken = externalIdTaken(s, cmd.external_id, websiteId);
      if (taken) return taken;
    }
    events.push({ type: 'WebsiteExternalIdSet', data: { website_id: websiteId, external_id: cmd.external_id } });
  }
  if (cmd.status !== undefined && cmd.status !== w.status) {
    if (w.status === 'deleted') return notFound('Website not found');
    events.push({ type: 'WebsiteStatusChanged', data: { website_id: websiteId, status: cmd.status } });
  }
  const next = { ...w, external_id: cmd.external_id !== undefined ? cmd.external_id : w.external_id, status: cmd.status ?? w.status };
  return { events, result: next };
}

export function updateWebsite(ctx: CommandContext, input: UpdateWebsite & { website_id: string }) {
  const { website_id: websiteId, ...change } = input;
  return handle({ ...ctx, websiteId }, organizationStream(ctx.organizationId), Organization, (s) => decideUpdateWebsite(s, websiteId, change));
}

export function decideDeleteWebsite(s: OrganizationState, websiteId: string): Decision<{ success: true }> | DomainError {
  const w = s.websites.get(websiteId);
  if (!w || w.status === 'deleted') return notFound('Website not found');
  return { events: [{ type: 'WebsiteStatusChanged', data: { website_id: websiteId, status: 'deleted' } }], result: { success: true } };
}

export function deleteWebsite(ctx: CommandContext, input: { website_id: string }) {
  const websiteId = input.website_id;
  return handle({ ...ctx, websiteId }, organizationStream(ctx.organizationId), Organization, (s) => decideDeleteWebsite(s, websiteId));
}
