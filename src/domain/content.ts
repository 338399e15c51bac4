import { z } from 'zod';

/**
 * The content hub's vocabulary (spec, "Content hub records"; CONTRACT.md, "Content hub"), shared by its events,
 * deciders, read model and views.
 */

/** generated, optimize, snipe, slice: made by the pipeline; manual; external and imported: tracked by URL. */
export const CONTENT_TYPES = ['generated', 'optimize', 'snipe', 'slice', 'manual', 'external', 'imported'] as const;
export const ContentType = z.enum(CONTENT_TYPES);
export type ContentType = z.infer<typeof ContentType>;
/** The four types the generation pipeline makes (the `generated_any` filter). */
export const GENERATED_TYPES: readonly ContentType[] = ['generated', 'optimize', 'snipe', 'slice'];

/** The pipeline's stage; null when no generation row exists (tracked pages). */
export const CONTENT_STAGES = ['scheduled', 'pending', 'pending_brief', 'generated_brief', 'pending_article', 'generated', 'done', 'failed'] as const;
export const ContentStage = z.enum(CONTENT_STAGES);
export type ContentStage = z.infer<typeof ContentStage>;

export const PIPELINE_STATUSES = ['running', 'succeeded', 'failed'] as const;
export const PipelineStatus = z.enum(PIPELINE_STATUSES);
export type PipelineStatus = z.infer<typeof PipelineStatus>;

/** Customer columns of a sheet: the six value types tracking fills, and `generated` (filled by aivis, refused by tracking). */
export const COLUMN_TYPES = ['text', 'link', 'number', 'date', 'checkbox', 'multi_select', 'generated'] as const;
export const ContentColumnType = z.enum(COLUMN_TYPES);
export type ContentColumnType = z.infer<typeof ContentColumnType>;

/** A custom column's stored value: text, link and date as strings (a date as an ISO instant), number, checkbox, the labels of a multi-select. */
export const ContentFieldValue = z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]);
export type ContentFieldValue = z.infer<typeof ContentFieldValue>;

export const CONTENT_NOT_FOUND = 'Content not found';
export const SHEET_NOT_FOUND = 'Sheet not found';

/** Streams of the area. */
export const contentStream = (contentId: string) => `content-${contentId}`;
export const contentUrlsStream = (websiteId: string) => `contenturls-${websiteId}`;
export const contentSheetsStream = (websiteId: string) => `contentsheets-${websiteId}`;
