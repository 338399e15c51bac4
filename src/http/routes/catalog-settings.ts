import { z } from 'zod';
import { CreateAttribute } from '../../../commands/catalog/create-attribute';
import { CreateLocation } from '../../../commands/catalog/create-location';
import { CreatePersona } from '../../../commands/catalog/create-persona';
import { CreateSavedView } from '../../../commands/catalog/create-saved-view';
import { CreateSchedule } from '../../../commands/catalog/create-schedule';
import { UpdateSavedView } from '../../../commands/catalog/update-saved-view';
import { UpdateSchedule } from '../../../commands/catalog/update-schedule';
import { text } from '../../domain/schemas';
import { route, Uuid } from '../route';
import { WebsiteQuery } from './catalog';
import { Answers } from '../../../queries/catalog/views';
import * as catalog from '../../app/catalog';

/** `default` is a selection, not a stored schedule: it cannot be edited. */
const ScheduleParams = z.object({
  schedule_id: text()
    .refine((s) => s !== 'default' && s !== 'manual', 'the default schedule cannot be changed')
    .pipe(Uuid)
    .meta({ format: 'uuid' }),
});

export const catalogSettingsRoutes = [
  // personas
  route({
    method: 'GET',
    url: '/api/v1/personas',
    summary: "The website's personas",
    tag: 'personas',
    extension: true,
    query: WebsiteQuery,
    responses: { 200: Answers.personas },
    handler: (ctx) => catalog.listPersonas(ctx, ctx.query.website_id),
  }),
  route({
    method: 'POST',
    url: '/api/v1/personas',
    summary: 'Create a persona',
    tag: 'personas',
    extension: true,
    body: CreatePersona,
    status: 201,
    responses: { 201: Answers.persona },
    handler: (ctx) => catalog.createPersona(ctx, ctx.body),
  }),

  // locations
  route({
    method: 'GET',
    url: '/api/v1/locations',
    summary: "The website's locations; their ids go in filters.location_ids",
    tag: 'locations',
    query: WebsiteQuery,
    responses: { 200: Answers.locations },
    handler: (ctx) => catalog.listLocations(ctx, ctx.query.website_id),
  }),
  route({
    method: 'POST',
    url: '/api/v1/locations',
    summary: 'Create a location',
    tag: 'locations',
    extension: true,
    body: CreateLocation,
    status: 201,
    responses: { 201: Answers.location },
    handler: (ctx) => catalog.createLocation(ctx, ctx.body),
  }),

  // attributes
  route({
    method: 'GET',
    url: '/api/v1/attributes',
    summary: "The website's attributes (traits to watch)",
    tag: 'attributes',
    query: WebsiteQuery,
    responses: { 200: Answers.attributes },
    handler: (ctx) => catalog.listAttributes(ctx, ctx.query.website_id),
  }),
  route({
    method: 'POST',
    url: '/api/v1/attributes',
    summary: 'Create an attribute (a trait to watch, e.g. price, support)',
    tag: 'attributes',
    extension: true,
    body: CreateAttribute,
    status: 201,
    responses: { 201: Answers.attribute },
    handler: (ctx) => catalog.createAttribute(ctx, ctx.body),
  }),

  // prompt schedules
  route({
    method: 'GET',
    url: '/api/v1/prompt-schedules',
    summary: '`default` first, then the custom schedules (archived ones included)',
    tag: 'prompt-schedules',
    query: WebsiteQuery,
    responses: { 200: Answers.schedules },
    handler: (ctx) => catalog.listSchedules(ctx, ctx.query.website_id),
  }),
  route({
    method: 'POST',
    url: '/api/v1/prompt-schedules',
    summary: 'Create a custom prompt schedule',
    tag: 'prompt-schedules',
    extension: true,
    body: CreateSchedule,
    status: 201,
    responses: { 201: Answers.schedule },
    handler: (ctx) => catalog.createSchedule(ctx, ctx.body),
  }),
  route({
    method: 'PATCH',
    url: '/api/v1/prompt-schedules/:schedule_id',
    summary: 'Edit a custom prompt schedule, or archive it with {archived: true}',
    tag: 'prompt-schedules',
    extension: true,
    params: ScheduleParams,
    body: UpdateSchedule,
    responses: { 200: Answers.schedule },
    handler: (ctx) => catalog.updateSchedule(ctx, ctx.params.schedule_id, ctx.body),
  }),

  // saved views
  route({
    method: 'GET',
    url: '/api/v1/saved-views',
    summary: "The website's saved views with their stored filters",
    tag: 'saved-views',
    query: WebsiteQuery,
    responses: { 200: Answers.savedViews },
    handler: (ctx) => catalog.listSavedViews(ctx, ctx.query.website_id),
  }),
  route({
    method: 'POST',
    url: '/api/v1/saved-views',
    summary: 'Save a view (filters are stored as given)',
    tag: 'saved-views',
    extension: true,
    body: CreateSavedView,
    status: 201,
    responses: { 201: Answers.savedView },
    handler: (ctx) => catalog.createSavedView(ctx, ctx.body),
  }),
  route({
    method: 'PATCH',
    url: '/api/v1/saved-views/:view_id',
    summary: 'Rename a view or replace its filters; the id stays',
    tag: 'saved-views',
    extension: true,
    params: z.object({ view_id: Uuid }),
    body: UpdateSavedView,
    responses: { 200: Answers.savedView },
    handler: (ctx) => catalog.updateSavedView(ctx, ctx.params.view_id, ctx.body),
  }),
];
