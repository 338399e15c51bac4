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
import { catalogOps } from './catalog-ops';

const Persona = z.object({ id: z.string(), name: z.string(), description: z.string().nullable() });
const Location = z.object({ id: z.string(), location: z.string(), country: z.string(), region: z.string().nullable(), city: z.string().nullable() });
const Attribute = z.object({ id: z.string(), name: z.string(), description: z.string().nullable() });
const Schedule = z.object({
  id: z.string(),
  name: z.string(),
  models: z.array(z.string()),
  starts_on: z.string().nullable(),
  ends_on: z.string().nullable(),
  frequency: z.enum(['daily', 'weekly']),
  is_active: z.boolean(),
  archived: z.boolean(),
});
const SavedView = z.object({ id: z.string(), name: z.string(), filters: z.record(z.string(), z.unknown()) });

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
    responses: { 200: z.object({ data: z.array(Persona) }) },
    handler: (ctx) => catalogOps.listPersonas(ctx, ctx.query.website_id),
  }),
  route({
    method: 'POST',
    url: '/api/v1/personas',
    summary: 'Create a persona',
    tag: 'personas',
    extension: true,
    body: CreatePersona,
    status: 201,
    responses: { 201: z.object({ persona: Persona }) },
    handler: (ctx) => catalogOps.createPersona(ctx, ctx.body),
  }),

  // locations
  route({
    method: 'GET',
    url: '/api/v1/locations',
    summary: "The website's locations; their ids go in filters.location_ids",
    tag: 'locations',
    query: WebsiteQuery,
    responses: { 200: z.object({ data: z.array(Location) }) },
    handler: (ctx) => catalogOps.listLocations(ctx, ctx.query.website_id),
  }),
  route({
    method: 'POST',
    url: '/api/v1/locations',
    summary: 'Create a location',
    tag: 'locations',
    extension: true,
    body: CreateLocation,
    status: 201,
    responses: { 201: Location },
    handler: (ctx) => catalogOps.createLocation(ctx, ctx.body),
  }),

  // attributes
  route({
    method: 'GET',
    url: '/api/v1/attributes',
    summary: "The website's attributes (traits to watch)",
    tag: 'attributes',
    query: WebsiteQuery,
    responses: { 200: z.object({ data: z.array(Attribute) }) },
    handler: (ctx) => catalogOps.listAttributes(ctx, ctx.query.website_id),
  }),
  route({
    method: 'POST',
    url: '/api/v1/attributes',
    summary: 'Create an attribute (a trait to watch, e.g. price, support)',
    tag: 'attributes',
    extension: true,
    body: CreateAttribute,
    status: 201,
    responses: { 201: z.object({ attribute: Attribute }) },
    handler: (ctx) => catalogOps.createAttribute(ctx, ctx.body),
  }),

  // prompt schedules
  route({
    method: 'GET',
    url: '/api/v1/prompt-schedules',
    summary: '`default` first, then the custom schedules (archived ones included)',
    tag: 'prompt-schedules',
    query: WebsiteQuery,
    responses: { 200: z.object({ data: z.array(Schedule) }) },
    handler: (ctx) => catalogOps.listSchedules(ctx, ctx.query.website_id),
  }),
  route({
    method: 'POST',
    url: '/api/v1/prompt-schedules',
    summary: 'Create a custom prompt schedule',
    tag: 'prompt-schedules',
    extension: true,
    body: CreateSchedule,
    status: 201,
    responses: { 201: z.object({ schedule: Schedule }) },
    handler: (ctx) => catalogOps.createSchedule(ctx, ctx.body),
  }),
  route({
    method: 'PATCH',
    url: '/api/v1/prompt-schedules/:schedule_id',
    summary: 'Edit a custom prompt schedule, or archive it with {archived: true}',
    tag: 'prompt-schedules',
    extension: true,
    params: ScheduleParams,
    body: UpdateSchedule,
    responses: { 200: z.object({ schedule: Schedule }) },
    handler: (ctx) => catalogOps.updateSchedule(ctx, ctx.params.schedule_id, ctx.body),
  }),

  // saved views
  route({
    method: 'GET',
    url: '/api/v1/saved-views',
    summary: "The website's saved views with their stored filters",
    tag: 'saved-views',
    query: WebsiteQuery,
    responses: { 200: z.object({ data: z.array(SavedView) }) },
    handler: (ctx) => catalogOps.listSavedViews(ctx, ctx.query.website_id),
  }),
  route({
    method: 'POST',
    url: '/api/v1/saved-views',
    summary: 'Save a view (filters are stored as given)',
    tag: 'saved-views',
    extension: true,
    body: CreateSavedView,
    status: 201,
    responses: { 201: z.object({ view: SavedView }) },
    handler: (ctx) => catalogOps.createSavedView(ctx, ctx.body),
  }),
  route({
    method: 'PATCH',
    url: '/api/v1/saved-views/:view_id',
    summary: "Rename a view or replace its filters; the id stays",
    tag: 'saved-views',
    extension: true,
    params: z.object({ view_id: Uuid }),
    body: UpdateSavedView,
    responses: { 200: z.object({ view: SavedView }) },
    handler: (ctx) => catalogOps.updateSavedView(ctx, ctx.params.view_id, ctx.body),
  }),
];
