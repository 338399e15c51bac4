import * as addCompetitorCommands from '../../commands/catalog/add-competitor';
import type { AddCompetitor } from '../../commands/catalog/add-competitor';
import * as createAttributeCommands from '../../commands/catalog/create-attribute';
import type { CreateAttribute } from '../../commands/catalog/create-attribute';
import * as createLocationCommands from '../../commands/catalog/create-location';
import type { CreateLocation } from '../../commands/catalog/create-location';
import * as createPersonaCommands from '../../commands/catalog/create-persona';
import type { CreatePersona } from '../../commands/catalog/create-persona';
import * as createPromptCommands from '../../commands/catalog/create-prompt';
import type { CreatePrompt } from '../../commands/catalog/create-prompt';
import * as createSavedViewCommands from '../../commands/catalog/create-saved-view';
import type { CreateSavedView } from '../../commands/catalog/create-saved-view';
import * as createScheduleCommands from '../../commands/catalog/create-schedule';
import type { CreateSchedule } from '../../commands/catalog/create-schedule';
import * as createTopicCommands from '../../commands/catalog/create-topic';
import type { CreateTopic } from '../../commands/catalog/create-topic';
import * as deletePromptCommands from '../../commands/catalog/delete-prompt';
import * as deleteTopicCommands from '../../commands/catalog/delete-topic';
import type { DeleteTopic } from '../../commands/catalog/delete-topic';
import * as removeCompetitorCommands from '../../commands/catalog/remove-competitor';
import * as updateCompetitorCommands from '../../commands/catalog/update-competitor';
import type { UpdateCompetitor } from '../../commands/catalog/update-competitor';
import * as updatePromptCommands from '../../commands/catalog/update-prompt';
import type { UpdatePrompt } from '../../commands/catalog/update-prompt';
import * as updateSavedViewCommands from '../../commands/catalog/update-saved-view';
import type { UpdateSavedView } from '../../commands/catalog/update-saved-view';
import * as updateScheduleCommands from '../../commands/catalog/update-schedule';
import type { UpdateSchedule } from '../../commands/catalog/update-schedule';
import * as competitorsQueries from '../../queries/catalog/competitors';
import { getCompetitor } from '../../queries/catalog/competitors';
import * as promptsQueries from '../../queries/catalog/prompts';
import { getPrompt } from '../../queries/catalog/prompts';
import * as savedViewsQueries from '../../queries/catalog/saved-views';
import { getSavedView } from '../../queries/catalog/saved-views';
import * as schedulesQueries from '../../queries/catalog/schedules';
import { getSchedule } from '../../queries/catalog/schedules';
import * as settingsQueries from '../../queries/catalog/settings';
import { getAttribute, getLocation, getPersona } from '../../queries/catalog/settings';
import * as topicsQueries from '../../queries/catalog/topics';
import { getTopic } from '../../queries/catalog/topics';
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
  return { competitors: await competitorsQueries.listCompetitors(dbOf(c), w.id) };
}
export async function addCompetitor(c: Caller, input: AddCompetitor) {
  const withUrl = (ctx: CommandContext, i: AddCompetitor, w: WebsiteRow) => addCompetitorCommands.addCompetitor(ctx, { ...i, website_url: w.url });
  return { competitor: await writeRow(c, need.competitors('edit'), input, withUrl, getCompetitor) };
}
export async function updateCompetitor(c: Caller, competitorId: string, input: UpdateCompetitor) {
  return {
    competitor: await writeRow(
      c,
      need.competitors('edit'),
      { ...input, competitor_id: competitorId },
      updateCompetitorCommands.updateCompetitor,
      getCompetitor,
    ),
  };
}
export function removeCompetitor(c: Caller, websiteId: string, competitorId: string) {
  return removeOn(c, need.competitors('edit'), { website_id: websiteId, competitor_id: competitorId }, removeCompetitorCommands.removeCompetitor);
}

// topics
export const listTopics = listing(need.prompts('view'), topicsQueries.listTopics);
export async function createTopic(c: Caller, input: CreateTopic) {
  const w = await websiteFor(c, input.website_id, need.prompts('edit'));
  return writeThenRead(c, createTopicCommands.createTopic(commandContextOf(c, w.id), { ...input, website_id: w.id }), READS, async (r) => {
    const topic = await getTopic(dbOf(c), w.id, r.id);
    return topic && { topic, restored: r.restored };
  });
}
export function deleteTopic(c: Caller, input: DeleteTopic) {
  return removeOn(c, need.prompts('edit'), input, deleteTopicCommands.deleteTopic);
}

// prompts
export const listPrompts = listing(need.prompts('view'), promptsQueries.listPrompts);
export async function createPrompt(c: Caller, input: CreatePrompt) {
  return { prompt: await writeRow(c, need.prompts('edit'), input, createPromptCommands.createPrompt, getPrompt) };
}
export async function updatePrompt(c: Caller, promptId: string, input: UpdatePrompt) {
  return { prompt: await writeRow(c, need.prompts('edit'), { ...input, prompt_id: promptId }, updatePromptCommands.updatePrompt, getPrompt) };
}
export function deletePrompt(c: Caller, websiteId: string, promptId: string) {
  return removeOn(c, need.prompts('edit'), { website_id: websiteId, prompt_id: promptId }, deletePromptCommands.deletePrompt);
}

// personas, locations, attributes
export const listPersonas = listing(need.prompts('view'), settingsQueries.listPersonas);
export async function createPersona(c: Caller, input: CreatePersona) {
  return { persona: await writeRow(c, need.prompts('edit'), input, createPersonaCommands.createPersona, getPersona) };
}
export const listLocations = listing(need.prompts('view'), settingsQueries.listLocations);
/** answered flat: {id, location, country, region, city} */
export function createLocation(c: Caller, input: CreateLocation) {
  return writeRow(c, need.prompts('edit'), input, createLocationCommands.createLocation, getLocation);
}
export const listAttributes = listing(need.knowledge('view'), settingsQueries.listAttributes);
export async function createAttribute(c: Caller, input: CreateAttribute) {
  return { attribute: await writeRow(c, need.knowledge('edit'), input, createAttributeCommands.createAttribute, getAttribute) };
}

// prompt schedules
export const listSchedules = listing(need.prompts('view'), schedulesQueries.listSchedules);
export async function createSchedule(c: Caller, input: CreateSchedule) {
  return { schedule: await writeRow(c, need.prompts('edit'), input, createScheduleCommands.createSchedule, getSchedule) };
}
export async function updateSchedule(c: Caller, scheduleId: string, input: UpdateSchedule) {
  return {
    schedule: await writeRow(c, need.prompts('edit'), { ...input, schedule_id: scheduleId }, updateScheduleCommands.updateSchedule, getSchedule),
  };
}

// saved views
export const listSavedViews = listing(need.analytics('view'), savedViewsQueries.listSavedViews);
export async function createSavedView(c: Caller, input: CreateSavedView) {
  return { view: await writeRow(c, need.analytics('edit'), input, createSavedViewCommands.createSavedView, getSavedView) };
}
export async function updateSavedView(c: Caller, viewId: string, input: UpdateSavedView) {
  return { view: await writeRow(c, need.analytics('edit'), { ...input, view_id: viewId }, updateSavedViewCommands.updateSavedView, getSavedView) };
}

// the model catalogue
export function listModels() {
  return { data: MODELS.map((m) => ({ id: m.id, label: m.label, shopping: m.shopping })) };
}
