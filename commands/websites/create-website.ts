import { conflict, type DomainError } from '../../src/domain/errors';
import type { DomainEvent } from '../../src/domain/events';
import { newId } from '../../src/domain/ids';
import { normalizeUrl } from '../../src/domain/urls';
import { type CommandContext, type Decision, handle } from '../handle';
import { Organization, type OrganizationState, organizationStream } from '../organizations/organization';
import type { CreateWebsite } from './website-input';

/** 409 with the website that already holds an external id (deleted ones included: the mapping is still theirs). */
export function externalIdTaken(s: OrganizationState, externalId: string, exceptWebsiteId?: string): DomainError | null {
  for (const w of s.websites.values()) {
    if (w.external_id === externalId && w.id !== exceptWebsiteId) {
      return conflict('external_id is already mapped to another website', {
        existing: { website_id: w.id, name: w.name, url: w.url, status: w.status, external_id: w.external_id },
      });
    }
  }
  return null;
}

export function decideCreateWebsite(s: OrganizationState, cmd: CreateWebsite & { website_id: string }): Decision<{ id: string }> | DomainError {
  if (cmd.external_id) {
    const taken = externalIdTaken(s, cmd.external_id);
    if (taken) return taken;
  }
  const data = {
    website_id: cmd.website_id,
    name: cmd.name,
    url: cmd.url,
    normalized_url: normalizeUrl(cmd.url),
    external_id: cmd.external_id ?? null,
  };
  const event: DomainEvent = { type: 'WebsiteCreated', data };
  return {
    events: [event],
    result: { id: data.website_id },
  };
}

export function createWebsite(ctx: CommandContext, input: CreateWebsite, websiteId = newId()) {
  return handle({ ...ctx, websiteId }, organizationStream(ctx.organizationId), Organization, (s) =>
    decideCreateWebsite(s, { ...input, website_id: websiteId }),
  );
}
