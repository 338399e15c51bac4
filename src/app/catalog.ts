import { addCompetitor as add, type AddCompetitor } from '../../commands/catalog/add-competitor';
import { createAttribute as newAttribute, type CreateAttribute } from '../../commands/catalog/create-attribute';
import { createLocation as newLocation, type CreateLocation } from '../../commands/catalog/create-location';
import { createPersona as newPersona, type CreatePersona } from '../../commands/catalog/create-persona';
import { createPrompt as newPrompt, type CreatePrompt } from '../../commands/catalog/create-prompt';
import { createSavedView as newSavedView, type CreateSavedView } from '../../commands/catalog/create-saved-view';
import { createSchedule as newSchedule, type CreateSchedule } from '../../commands/catalog/create-schedule';
import { createTopic as newTopic, type CreateTopic } from '../../commands/catalog/create-topic';
import { deletePrompt as removePrompt } from '../../commands/catalog/delete-prompt';
import { deleteTopic as removeTopic, type DeleteTopic } from '../../commands/catalog/delete-topic';
import { removeCompetitor as remove } from '../../commands/catalog/remove-competitor';
import { updateCompetitor as changeCompetitor, type UpdateCompetitor } from '../../commands/catalog/update-competitor';
import { updatePrompt as changePrompt, type UpdatePrompt } from '../../commands/catalog/update-prompt';
import { updateSavedView as changeSavedView, type UpdateSavedView } from '../../commands/catalog/update-saved-view';
import { updateSchedule as changeSchedule, type UpdateSchedule } from '../../commands/catalog/update-schedule';
import { getCompetitor, listCompetitors as competitorsOf } from '../../queries/catalog/competitors';
import { getPrompt, listPrompts as promptsOf } from '../../queries/catalog/prompts';
import { getSavedView, listSavedViews as savedViewsOf } from '../../queries/catalog/saved-views';
import { getSchedule, listSchedules as schedulesOf } from '../../queries/catalog/schedules';
import {
  getAttribute,
  getLocation,
  getPersona,
  listAttributes as attributesOf,
  listLocations as locationsOf,
  listPersonas as personasOf,
} from '../../queries/catalog/settings';
import { getTopic, listTopics as topicsOf } from '../../queries/catalog/topics';
import { MODELS } from '../domain/models';
import type { Need } from '../domain/principal';
import { type Caller, commandContextOf, dbOf, type Reads, settled, websiteFor, writeThenRead } from './context';

/**
 * The catalogue's operations (REST routes and MCP tools both call them): the caller's access to the website, the
 * command or query, read-your-writes, and the answer read back from the read model. Business rules live in
 * commands/catalog.
 */

/**
 * Every catalogue write is read back from the catalogue read model (and so is what a client lists next). Not the
 * answers read model: a competitor's change re-derives the website's history there, which the answer does not read.
 */
const READS: Reads = ['catalog'];

/** What each part of the catalogue needs of the caller (an API key is an admin within its scope). */
const need = {
  competitors: (level: Need['level']): Need => ({ category: 'competitors', level }),
  prompts: (level: Need['level']): Need => ({ category: 'prompts', level }),
  knowledge: (level: Need['level']): Need => ({ category: 'brand_knowledge', level }),
  analytics: (level: Need['level']): Need => ({ category: 'analytics', level }),
};

// competitors
export async function listCompetitors(c: Caller, websiteId: string) {
  const w = await websiteFor(c, websiteId, need.competitors('view'));
  return { competitors: await competitorsOf(dbOf(c), w.id) };
}
export async function addCompetitor(c: Caller, input: AddCompetitor) {
  const w = await websiteFor(c, input.website_id, need.competitors('edit'));
  const competitor = await writeThenRead(c, add(commandContextOf(c, w.id), { ...input, website_id: w.id, website_url: w.url }), READS, (r) =>
    getCompetitor(dbOf(c), w.id, r.id),
  );
  return { competitor };
}
export async function updateCompetitor(c: Caller, competitorId: string, input: UpdateCompetitor) {
  const w = await websiteFor(c, input.website_id, need.competitors('edit'));
  const competitor = await writeThenRead(
    c,
    changeCompetitor(commandContextOf(c, w.id), { ...input, website_id: w.id, competitor_id: competitorId }),
    READS,
    (r) => getCompetitor(dbOf(c), w.id, r.id),
  );
  return { competitor };
}
export async function removeCompetitor(c: Caller, websiteId: string, competitorId: string) {
  const w = await websiteFor(c, websiteId, need.competitors('edit'));
  return settled(c.deps, remove(commandContextOf(c, w.id), { website_id: w.id, competitor_id: competitorId }), READS);
}

// topics
export async function listTopics(c: Caller, websiteId: string) {
  const w = await websiteFor(c, websiteId, need.prompts('view'));
  return { data: await topicsOf(dbOf(c), w.id) };
}
export async function createTopic(c: Caller, input: CreateTopic) {
  const w = await websiteFor(c, input.website_id, need.prompts('edit'));
  return writeThenRead(c, newTopic(commandContextOf(c, w.id), { ...input, website_id: w.id }), READS, async (r) => {
    const topic = await getTopic(dbOf(c), w.id, r.id);
    return topic && { topic, restored: r.restored };
  });
}
export async function deleteTopic(c: Caller, input: DeleteTopic) {
  const w = await websiteFor(c, input.website_id, need.prompts('edit'));
  return settled(c.deps, removeTopic(commandContextOf(c, w.id), { ...input, website_id: w.id }), READS);
}

// prompts
export async function listPrompts(c: Caller, websiteId: string) {
  const w = await websiteFor(c, websiteId, need.prompts('view'));
  return { data: await promptsOf(dbOf(c), w.id) };
}
export async function createPrompt(c: Caller, input: CreatePrompt) {
  const w = await websiteFor(c, input.website_id, need.prompts('edit'));
  const prompt = await writeThenRead(c, newPrompt(commandContextOf(c, w.id), { ...input, website_id: w.id }), READS, (r) =>
    getPrompt(dbOf(c), w.id, r.id),
  );
  return { prompt };
}
export async function updatePrompt(c: Caller, promptId: string, input: UpdatePrompt) {
  const w = await websiteFor(c, input.website_id, need.prompts('edit'));
  const prompt = await writeThenRead(c, changePrompt(commandContextOf(c, w.id), { ...input, website_id: w.id, prompt_id: promptId }), READS, (r) =>
    getPrompt(dbOf(c), w.id, r.id),
  );
  return { prompt };
}
export async function deletePrompt(c: Caller, websiteId: string, promptId: string) {
  const w = await websiteFor(c, websiteId, need.prompts('edit'));
  return settled(c.deps, removePrompt(commandContextOf(c, w.id), { website_id: w.id, prompt_id: promptId }), READS);
}

// personas, locations, attributes
export async function listPersonas(c: Caller, websiteId: string) {
  const w = await websiteFor(c, websiteId, need.prompts('view'));
  return { data: await personasOf(dbOf(c), w.id) };
}
export async function createPersona(c: Caller, input: CreatePersona) {
  const w = await websiteFor(c, input.website_id, need.prompts('edit'));
  const persona = await writeThenRead(c, newPersona(commandContextOf(c, w.id), { ...input, website_id: w.id }), READS, (r) =>
    getPersona(dbOf(c), w.id, r.id),
  );
  return { persona };
}
export async function listLocations(c: Caller, websiteId: string) {
  const w = await websiteFor(c, websiteId, need.prompts('view'));
  return { data: await locationsOf(dbOf(c), w.id) };
}
/** answered flat: {id, location, country, region, city} */
export async function createLocation(c: Caller, input: CreateLocation) {
  const w = await websiteFor(c, input.website_id, need.prompts('edit'));
  return writeThenRead(c, newLocation(commandContextOf(c, w.id), { ...input, website_id: w.id }), READS, (r) => getLocation(dbOf(c), w.id, r.id));
}
export async function listAttributes(c: Caller, websiteId: string) {
  const w = await websiteFor(c, websiteId, need.knowledge('view'));
  return { data: await attributesOf(dbOf(c), w.id) };
}
export async function createAttribute(c: Caller, input: CreateAttribute) {
  const w = await websiteFor(c, input.website_id, need.knowledge('edit'));
  const attribute = await writeThenRead(c, newAttribute(commandContextOf(c, w.id), { ...input, website_id: w.id }), READS, (r) =>
    getAttribute(dbOf(c), w.id, r.id),
  );
  return { attribute };
}

// prompt schedules
export async function listSchedules(c: Caller, websiteId: string) {
  const w = await websiteFor(c, websiteId, need.prompts('view'));
  return { data: await schedulesOf(dbOf(c), w.id) };
}
export async function createSchedule(c: Caller, input: CreateSchedule) {
  const w = await websiteFor(c, input.website_id, need.prompts('edit'));
  const schedule = await writeThenRead(c, newSchedule(commandContextOf(c, w.id), { ...input, website_id: w.id }), READS, (r) =>
    getSchedule(dbOf(c), w.id, r.id),
  );
  return { schedule };
}
export async function updateSchedule(c: Caller, scheduleId: string, input: UpdateSchedule) {
  const w = await websiteFor(c, input.website_id, need.prompts('edit'));
  const schedule = await writeThenRead(
    c,
    changeSchedule(commandContextOf(c, w.id), { ...input, website_id: w.id, schedule_id: scheduleId }),
    READS,
    (r) => getSchedule(dbOf(c), w.id, r.id),
  );
  return { schedule };
}

// saved views
export async function listSavedViews(c: Caller, websiteId: string) {
  const w = await websiteFor(c, websiteId, need.analytics('view'));
  return { data: await savedViewsOf(dbOf(c), w.id) };
}
export async function createSavedView(c: Caller, input: CreateSavedView) {
  const w = await websiteFor(c, input.website_id, need.analytics('edit'));
  const view = await writeThenRead(c, newSavedView(commandContextOf(c, w.id), { ...input, website_id: w.id }), READS, (r) =>
    getSavedView(dbOf(c), w.id, r.id),
  );
  return { view };
}
export async function updateSavedView(c: Caller, viewId: string, input: UpdateSavedView) {
  const w = await websiteFor(c, input.website_id, need.analytics('edit'));
  const view = await writeThenRead(c, changeSavedView(commandContextOf(c, w.id), { ...input, website_id: w.id, view_id: viewId }), READS, (r) =>
    getSavedView(dbOf(c), w.id, r.id),
  );
  return { view };
}

// the model catalogue
export function listModels() {
  return { data: MODELS.map((m) => ({ id: m.id, label: m.label, shopping: m.shopping })) };
}
