/** The error mapping lives in src/app/errors.ts (REST and MCP share it); kept here for the HTTP layer's imports. */
export { badRequest, fromDomainError, HttpError, issueMessage, sendError, toHttpError, unauthorized } from '../app/errors';
