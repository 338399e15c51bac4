import { z } from 'zod';
import { CreateAttribute } from '../../../commands/catalog/create-attribute';
import { CreateLocation } from '../../../commands/catalog/create-location';
import { CreatePersona } from '../../../commands/catalog/create-persona';
import { CreateSavedView } from '../../../commands/catalog/create-saved-view';
import { CreateSchedule } from '../../../commands/catalog/create-schedule';
import { UpdateSavedView } from '../../../commands/catalog/update-saved-view';
import { UpdateSchedule } from '../../../commands/catalog/update-schedule';
import { text } from '../../domain/schemas';
import { Uuid } from '../route';
import { websiteCollection } from './catalog';
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
  ...websiteCollection({
    url: '/api/v1/personas',
    tag: 'personas',
    list: { summary: "The website's personas", extension: true, answer: Answers.personas, op: catalog.listPersonas },
    create: { summary: 'Create a persona', extension: true, body: CreatePersona, answer: Answers.persona, op: catalog.createPersona },
  }),

  // locations
  ...websiteCollection({
    url: '/api/v1/locations',
    tag: 'locations',
    list: { summary: "The website's locations; their ids go in filters.location_ids", answer: Answers.locations, op: catalog.listLocations },
    create: { summary: 'Create a location', extension: true, body: CreateLocation, answer: Answers.location, op: catalog.createLocation },
  }),

  // attributes
  ...websiteCollection({
    url: '/api/v1/attributes',
    tag: 'attributes',
    list: { summary: "The website's attributes (traits to watch)", answer: Answers.attributes, op: catalog.listAttributes },
    create: {
      summary: 'Create an attribute (a trait to watch, e.g. price, support)',
      extension: true,
      body: CreateAttribute,
      answer: Answers.attribute,
      op: catalog.createAttribute,
    },
  }),

  // prompt schedules
  ...websiteCollection({
    url: '/api/v1/prompt-schedules',
    tag: 'prompt-schedules',
    list: { summary: '`default` first, then the custom schedules (archived ones included)', answer: Answers.schedules, op: catalog.listSchedules },
    create: {
      summary: 'Create a custom prompt schedule',
      extension: true,
      body: CreateSchedule,
      answer: Answers.schedule,
      op: catalog.createSchedule,
    },
    item: {
      id: 'schedule_id',
      params: ScheduleParams,
      patch: {
        summary: 'Edit a custom prompt schedule, or archive it with {archived: true}',
        extension: true,
        body: UpdateSchedule,
        answer: Answers.schedule,
        op: catalog.updateSchedule,
      },
    },
  }),

  // saved views
  ...websiteCollection({
    url: '/api/v1/saved-views',
    tag: 'saved-views',
    list: { summary: "The website's saved views with their stored filters", answer: Answers.savedViews, op: catalog.listSavedViews },
    create: {
      summary: 'Save a view (filters are stored as given)',
      extension: true,
      body: CreateSavedView,
      answer: Answers.savedView,
      op: catalog.createSavedView,
    },
    item: {
      id: 'view_id',
      patch: {
        summary: 'Rename a view or replace its filters; the id stays',
        extension: true,
        body: UpdateSavedView,
        answer: Answers.savedView,
        op: catalog.updateSavedView,
      },
    },
  }),
];
