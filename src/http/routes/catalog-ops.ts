import type { Handled } from '../../../commands/handle';
import { addCompetitor, type AddCompetitor } from '../../../commands/catalog/add-competitor';
import { createAttribute, type CreateAttribute } from '../../../commands/catalog/create-attribute';
import { createLocation, type CreateLocation } from '../../../commands/catalog/create-location';
import { createPersona, type CreatePersona } from '../../../commands/catalog/create-persona';
import { createPrompt, type CreatePrompt } from '../../../commands/catalog/create-prompt';
import { createSavedView, type CreateSavedView } from '../../../commands/catalog/create-saved-view';
import { createSchedule, type CreateSchedule } from '../../../commands/catalog/create-schedule';
import { createTopic, type CreateTopic } from '../../../commands/catalog/create-topic';
import { deletePrompt } from '../../../commands/catalog/delete-prompt';
import { deleteTopic } from '../../../commands/catalog/delete-topic';
import { removeCompetitor } from '../../../commands/catalog/remove-competitor';
import { updateCompetitor, type UpdateCompetitor } from '../../../commands/catalog/update-competitor';
import { updatePrompt, type UpdatePrompt } from '../../../commands/catalog/update-prompt';
import { updateSavedView, type UpdateSavedView } from '../../../commands/catalog/update-saved-view';
import { updateSchedule, type UpdateSchedule } from '../../../commands/catalog/update-schedule';
import { requireWebsite } from '../../../queries/access';
import { getCompetitor, listCompetitors } from '../../../queries/catalog/competitors';
import { getPrompt, listPrompts } from '../../../queries/catalog/prompts';
import { getSavedView, listSavedViews } from '../../../queries/catalog/saved-views';
import { getSchedule, listSchedules } from '../../../queries/catalog/schedules';
import { getAttribute, getLocation, getPersona, listAttributes, listLocations, listPersonas } from '../../../queries/catalog/settings';
import { listTopics } from '../../../queries/catalog/topics';
import type { DomainError } from '../../domain/errors';
import { MODELS } from '../../domain/models';
import { type Reads, settled as settleWrite } from '../route';
import { type Caller, commandContextOf, dbOf } from './caller';

/**
 * The catalogue's operations as REST routes and MCP tools both run them: the key's access to the website, the
 * command or query, read-your-writes, and the answer's shape. Business rules live in commands/catalog.
 */
export type { Caller };

const commandContext = commandContextOf;

/** The website, if the key may use it (403/404 otherwise). */
const site = (c: Caller, websiteId: string) => requireWebsite(dbOf(c), c.principal, websiteId);

/**
 * Every catalogue write is read back from the catalogue read model (and so is what a client lists next). Not the
 * answers read model: a competitor's change re-derives the website's history there, which the answer does not read.
 */
const READS: Reads = ['catalog'];

const settled = <R>(c: Caller, run: Promise<Handled<R> | DomainError>) => settleWrite(c.deps, run, READS);

/** A write answered with the read model's row (the listing's shape), or the decision's own view if it lags. */
async function write<R, T>(c: Caller, run: Promise<Handled<R> | DomainError>, read: (r: R) => Promise<T | undefined>): Promise<T | R> {
  const r = await settled(c, run);
  return (await read(r)) ?? r;
}

export const catalogOps = {
  // competitors
  async listCompetitors(c: Caller, websiteId: string) {
    await site(c, websiteId);
    return { competitors: await listCompetitors(dbOf(c), websiteId) };
  },
  async addCompetitor(c: Caller, input: AddCompetitor) {
    const w = await site(c, input.website_id);
    const competitor = await write(c, addCompetitor(commandContext(c, w.id), w, input), (r) => getCompetitor(dbOf(c), w.id, r.id));
    return { competitor };
  },
  async updateCompetitor(c: Caller, competitorId: string, input: UpdateCompetitor) {
    const w = await site(c, input.website_id);
    const competitor = await write(c, updateCompetitor(commandContext(c, w.id), w.id, competitorId, input), (r) => getCompetitor(dbOf(c), w.id, r.id));
    return { competitor };
  },
  async removeCompetitor(c: Caller, websiteId: string, competitorId: string) {
    const w = await site(c, websiteId);
    return settled(c, removeCompetitor(commandContext(c, w.id), w.id, competitorId));
  },

  // topics
  async listTopics(c: Caller, websiteId: string) {
    await site(c, websiteId);
    return { data: await listTopics(dbOf(c), websiteId) };
  },
  async createTopic(c: Caller, input: CreateTopic) {
    const w = await site(c, input.website_id);
    return settled(c, createTopic(commandContext(c, w.id), w.id, input));
  },
  async deleteTopic(c: Caller, websiteId: string, topicId: string, deletePrompts: boolean) {
    const w = await site(c, websiteId);
    return settled(c, deleteTopic(commandContext(c, w.id), { website_id: w.id, topic_id: topicId, delete_prompts: deletePrompts }));
  },

  // prompts
  async listPrompts(c: Caller, websiteId: string) {
    await site(c, websiteId);
    return { data: await listPrompts(dbOf(c), websiteId) };
  },
  async createPrompt(c: Caller, input: CreatePrompt) {
    const w = await site(c, input.website_id);
    const prompt = await write(c, createPrompt(commandContext(c, w.id), w.id, input), (r) => getPrompt(dbOf(c), w.id, r.id));
    return { prompt };
  },
  async updatePrompt(c: Caller, promptId: string, input: UpdatePrompt) {
    const w = await site(c, input.website_id);
    const prompt = await write(c, updatePrompt(commandContext(c, w.id), w.id, promptId, input), (r) => getPrompt(dbOf(c), w.id, r.id));
    return { prompt };
  },
  async deletePrompt(c: Caller, websiteId: string, promptId: string) {
    const w = await site(c, websiteId);
    return settled(c, deletePrompt(commandContext(c, w.id), w.id, promptId));
  },

  // personas, locations, attributes
  async listPersonas(c: Caller, websiteId: string) {
    await site(c, websiteId);
    return { data: await listPersonas(dbOf(c), websiteId) };
  },
  async createPersona(c: Caller, input: CreatePersona) {
    const w = await site(c, input.website_id);
    const persona = await write(c, createPersona(commandContext(c, w.id), w.id, input), (r) => getPersona(dbOf(c), w.id, r.id));
    return { persona };
  },
  async listLocations(c: Caller, websiteId: string) {
    await site(c, websiteId);
    return { data: await listLocations(dbOf(c), websiteId) };
  },
  /** answered flat: {id, location, country, region, city} */
  async createLocation(c: Caller, input: CreateLocation) {
    const w = await site(c, input.website_id);
    return write(c, createLocation(commandContext(c, w.id), w.id, input), (r) => getLocation(dbOf(c), w.id, r.id));
  },
  async listAttributes(c: Caller, websiteId: string) {
    await site(c, websiteId);
    return { data: await listAttributes(dbOf(c), websiteId) };
  },
  async createAttribute(c: Caller, input: CreateAttribute) {
    const w = await site(c, input.website_id);
    const attribute = await write(c, createAttribute(commandContext(c, w.id), w.id, input), (r) => getAttribute(dbOf(c), w.id, r.id));
    return { attribute };
  },

  // prompt schedules
  async listSchedules(c: Caller, websiteId: string) {
    await site(c, websiteId);
    return { data: await listSchedules(dbOf(c), websiteId) };
  },
  async createSchedule(c: Caller, input: CreateSchedule) {
    const w = await site(c, input.website_id);
    const schedule = await write(c, createSchedule(commandContext(c, w.id), w.id, input), (r) => getSchedule(dbOf(c), w.id, r.id));
    return { schedule };
  },
  async updateSchedule(c: Caller, scheduleId: string, input: UpdateSchedule) {
    const w = await site(c, input.website_id);
    const schedule = await write(c, updateSchedule(commandContext(c, w.id), w.id, scheduleId, input), (r) => getSchedule(dbOf(c), w.id, r.id));
    return { schedule };
  },

  // saved views
  async listSavedViews(c: Caller, websiteId: string) {
    await site(c, websiteId);
    return { data: await listSavedViews(dbOf(c), websiteId) };
  },
  async createSavedView(c: Caller, input: CreateSavedView) {
    const w = await site(c, input.website_id);
    const view = await write(c, createSavedView(commandContext(c, w.id), w.id, input), (r) => getSavedView(dbOf(c), w.id, r.id));
    return { view };
  },
  async updateSavedView(c: Caller, viewId: string, input: UpdateSavedView) {
    const w = await site(c, input.website_id);
    const view = await write(c, updateSavedView(commandContext(c, w.id), w.id, viewId, input), (r) => getSavedView(dbOf(c), w.id, r.id));
    return { view };
  },

  // the model catalogue
  listModels() {
    return { data: MODELS.map((m) => ({ id: m.id, label: m.label, shopping: m.shopping })) };
  },
};
