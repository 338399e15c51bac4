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
import type { Knex } from 'knex';
import type { CommandContext, Handled } from '../../commands/handle';
import type { WebsiteRow } from '../../queries/access';
import type { DomainError } from '../domain/errors';
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

/** A website's rows of one kind as `{data}`: the caller needs `needs` on the website. */
function listing<T>(needs: Need, rows: (db: Knex, websiteId: string) => Promise<T[]>) {
  return async (c: Caller, websiteId: string) => {
    const w = await websiteFor(c, websiteId, needs);
    return { data: await rows(dbOf(c), w.id) };
  };
}

/**
 * A write to the caller's website (`needs` on the website `input` names): `command` with the input, its website_id the
 * website's own, then the row its result names, read back from the catalogue read model.
 */
async function writeRow<I extends { website_id: string }, R extends { id: string }, T>(
  c: Caller,
  needs: Need,
  input: I,
  command: (ctx: CommandContext, input: I, w: WebsiteRow) => Promise<Pick<Handled<R>, 'result' | 'position'> | DomainError>,
  read: (db: Knex, websiteId: string, id: string) => Promise<T | undefined>,
): Promise<T> {
  const w = await websiteFor(c, input.website_id, needs);
  return writeThenRead(c, command(commandContextOf(c, w.id), { ...input, website_id: w.id }, w), READS, (r) => read(dbOf(c), w.id, r.id));
}

/** A removal on the caller's website (`needs` on the website `input` names): `command` with the website's own id, settled. */
async function removeOn<I extends { website_id: string }, R>(
  c: Caller,
  needs: Need,
  input: I,
  command: (ctx: CommandContext, input: I) => Promise<Handled<R> | DomainError>,
): Promise<R> {
  const w = await websiteFor(c, input.website_id, needs);
  return settled(c.deps, command(commandContextOf(c, w.id), { ...input, website_id: w.id }), READS);
}

// competitors
export async function listCompetitors(c: Caller, websiteId: string) {
  const w = await websiteFor(c, websiteId, need.competitors('view'));
  return { competitors: await competitorsOf(dbOf(c), w.id) };
}
export async function addCompetitor(c: Caller, input: AddCompetitor) {
  const withUrl = (ctx: CommandContext, i: AddCompetitor, w: WebsiteRow) => add(ctx, { ...i, website_url: w.url });
  return { competitor: await writeRow(c, need.competitors('edit'), input, withUrl, getCompetitor) };
}
export async function updateCompetitor(c: Caller, competitorId: string, input: UpdateCompetitor) {
  return { competitor: await writeRow(c, need.competitors('edit'), { ...input, competitor_id: competitorId }, changeCompetitor, getCompetitor) };
}
export function removeCompetitor(c: Caller, websiteId: string, competitorId: string) {
  return removeOn(c, need.competitors('edit'), { website_id: websiteId, competitor_id: competitorId }, remove);
}

// topics
export const listTopics = listing(need.prompts('view'), topicsOf);
export async function createTopic(c: Caller, input: CreateTopic) {
  const w = await websiteFor(c, input.website_id, need.prompts('edit'));
  return writeThenRead(c, newTopic(commandContextOf(c, w.id), { ...input, website_id: w.id }), READS, async (r) => {
    const topic = await getTopic(dbOf(c), w.id, r.id);
    return topic && { topic, restored: r.restored };
  });
}
export function deleteTopic(c: Caller, input: DeleteTopic) {
  return removeOn(c, need.prompts('edit'), input, removeTopic);
}

// prompts
export const listPrompts = listing(need.prompts('view'), promptsOf);
export async function createPrompt(c: Caller, input: CreatePrompt) {
  return { prompt: await writeRow(c, need.prompts('edit'), input, newPrompt, getPrompt) };
}
export async function updatePrompt(c: Caller, promptId: string, input: UpdatePrompt) {
  return { prompt: await writeRow(c, need.prompts('edit'), { ...input, prompt_id: promptId }, changePrompt, getPrompt) };
}
export function deletePrompt(c: Caller, websiteId: string, promptId: string) {
  return removeOn(c, need.prompts('edit'), { website_id: websiteId, prompt_id: promptId }, removePrompt);
}

// personas, locations, attributes
export const listPersonas = listing(need.prompts('view'), personasOf);
export async function createPersona(c: Caller, input: CreatePersona) {
  return { persona: await writeRow(c, need.prompts('edit'), input, newPersona, getPersona) };
}
export const listLocations = listing(need.prompts('view'), locationsOf);
/** answered flat: {id, location, country, region, city} */
export function createLocation(c: Caller, input: CreateLocation) {
  return writeRow(c, need.prompts('edit'), input, newLocation, getLocation);
}
export const listAttributes = listing(need.knowledge('view'), attributesOf);
export async function createAttribute(c: Caller, input: CreateAttribute) {
  return { attribute: await writeRow(c, need.knowledge('edit'), input, newAttribute, getAttribute) };
}

// prompt schedules
export const listSchedules = listing(need.prompts('view'), schedulesOf);
export async function createSchedule(c: Caller, input: CreateSchedule) {
  return { schedule: await writeRow(c, need.prompts('edit'), input, newSchedule, getSchedule) };
}
export async function updateSchedule(c: Caller, scheduleId: string, input: UpdateSchedule) {
  return { schedule: await writeRow(c, need.prompts('edit'), { ...input, schedule_id: scheduleId }, changeSchedule, getSchedule) };
}

// saved views
export const listSavedViews = listing(need.analytics('view'), savedViewsOf);
export async function createSavedView(c: Caller, input: CreateSavedView) {
  return { view: await writeRow(c, need.analytics('edit'), input, newSavedView, getSavedView) };
}
export async function updateSavedView(c: Caller, viewId: string, input: UpdateSavedView) {
  return { view: await writeRow(c, need.analytics('edit'), { ...input, view_id: viewId }, changeSavedView, getSavedView) };
}

// the model catalogue
export function listModels() {
  return { data: MODELS.map((m) => ({ id: m.id, label: m.label, shopping: m.shopping })) };
}
