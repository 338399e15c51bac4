import * as provisionWebsiteCommands from '../../commands/websites/provision-website';
import type { ProvisionWebsite } from '../../commands/websites/provision-website';
import * as createWebsiteCommands from '../../commands/websites/create-website';
import * as updateWebsiteCommands from '../../commands/websites/update-website';
import type { UpdateWebsite } from '../../commands/websites/update-website';
import type { CreateWebsite } from '../../commands/websites/website-input';
import * as websitesQueries from '../../queries/websites/websites';
import { websiteView, findWebsiteView } from '../../queries/websites/websites';
import { authorize, type Need, requireGlobal, requirePartner } from '../domain/principal';
import { type Caller, commandContextOf, dbOf, type Reads, settled, websiteFor, writeThenRead } from './context';

/** A website is read back from the websites read model, which also admits every later call on it. */
const READS: Reads = ['websites'];
/** A new website's brand is also the first entity of its answers read model (metrics, shopping and listing read it). */
const CREATE_READS: Reads = ['websites', 'answers'];
/** Provisioning also answers with, and is followed by reads of, the competitors, topics and prompts it created. */
const PROVISION_READS: Reads = ['websites', 'catalog', 'answers'];

const VIEW: Need = { category: 'organization', level: 'view' };
const MANAGE: Need = { category: 'organization', level: 'manage' };

/** The websites the caller reaches (deleted ones left out). */
export async function listWebsites(c: Caller) {
  authorize(c.principal, VIEW);
  return { websites: await websitesQueries.listWebsites(dbOf(c), c.principal) };
}

/** One active website within the caller's reach. */
export async function getWebsite(c: Caller, websiteId: string) {
  const w = await websiteFor(c, websiteId, VIEW);
  return { website: websiteView(w, c.principal) };
}

/** A new website (global key; an external_id needs a partner key), answered as the read model has it. */
export async function createWebsite(c: Caller, input: CreateWebsite) {
  requireGlobal(c.principal);
  if (input.external_id !== undefined) requirePartner(c.principal);
  authorize(c.principal, MANAGE);
  const website = await writeThenRead(c, createWebsiteCommands.createWebsite(commandContextOf(c), input), CREATE_READS, (r) =>
    findWebsiteView(dbOf(c), c.principal, r.id),
  );
  return { website };
}

/** A new website with its competitors, topics and prompts in one call. */
export async function provisionWebsite(c: Caller, input: ProvisionWebsite) {
  requireGlobal(c.principal);
  if (input.external_id !== undefined) requirePartner(c.principal);
  authorize(c.principal, MANAGE);
  return writeThenRead(c, provisionWebsiteCommands.provisionWebsite(commandContextOf(c), input), PROVISION_READS, async (r) => {
    const website = await findWebsiteView(dbOf(c), c.principal, r.website.id);
    return website && { ...r, website };
  });
}

/** A website by the partner's own id (partner keys). */
export async function websiteByExternalId(c: Caller, externalId: string) {
  requirePartner(c.principal);
  return { website: await websitesQueries.websiteByExternalId(dbOf(c), c.principal, externalId) };
}

/** Sets or clears the external_id (partner global key; works on deleted websites), pauses or resumes. */
export async function updateWebsite(c: Caller, websiteId: string, input: UpdateWebsite) {
  if (input.external_id !== undefined) {
    requireGlobal(c.principal);
    requirePartner(c.principal);
  }
  // a paused website can be resumed; a deleted one only re-mapped
  await websiteFor(c, websiteId, MANAGE, { paused: true, deleted: input.status === undefined });
  const website = await writeThenRead(
    c,
    updateWebsiteCommands.updateWebsite(commandContextOf(c, websiteId), { ...input, website_id: websiteId }),
    READS,
    (r) => findWebsiteView(dbOf(c), c.principal, r.id),
  );
  return { website };
}

/** Soft-deletes a website. */
export async function deleteWebsite(c: Caller, websiteId: string) {
  await websiteFor(c, websiteId, MANAGE, { paused: true });
  return settled(c.deps, updateWebsiteCommands.deleteWebsite(commandContextOf(c, websiteId), { website_id: websiteId }), READS);
}
