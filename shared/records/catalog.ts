import { z } from 'zod';
import { isValidTimeZone } from '../config.js';
import { boundedJsonObject, opaqueId, positiveId, version } from './fields.js';

export const CATALOG_TYPES = ['list', 'user', 'list_access', 'smtp_account', 'template', 'workflow'] as const;
export type CatalogType = (typeof CATALOG_TYPES)[number];

export const MAX_TEMPLATE_BYTES = 512 * 1024;
/**
 * What a template's `props` may be to be stored at all (docs/records.md "Catalog records"). Wider than
 * the render limits (64 KiB of templated strings): props over those are stored and answer 17007.
 */
export const MAX_PROPS_DEPTH = 32;
export const MAX_STORED_PROPS_BYTES = 512 * 1024;

export const catalogSchemas = [
  z.object({
    type: z.literal('list'),
    list_id: positiveId,
    name: z.string().max(512).default(''),
    /** Absent means the service's DEFAULT_TIMEZONE (Europe/Bucharest unless configured). */
    timezone: z.string().refine(isValidTimeZone, 'must be an IANA time zone').optional(),
    currency: z
      .string()
      .regex(/^[A-Z]{3}$/, 'must be a 3-letter ISO 4217 code')
      .default('RON'),
    /** Our addition: the locale template helpers format numbers and dates in. */
    locale: z
      .string()
      .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'must be a BCP 47 locale such as ro-RO')
      .default('ro-RO'),
    version,
  }),
  z.object({
    type: z.literal('user'),
    user_id: positiveId,
    api_key_sha256: z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex characters (SHA-256 of the key)')
      .transform((s) => s.toLowerCase()),
    active: z.boolean().default(true),
    version,
  }),
  z.object({
    type: z.literal('list_access'),
    user_id: positiveId,
    list_id: positiveId,
    granted: z.boolean(),
    version,
  }),
  z.object({
    type: z.literal('smtp_account'),
    account_id: opaqueId,
    list_id: positiveId,
    active: z.boolean(),
    is_default: z.boolean().default(false),
    version,
  }),
  z.object({
    type: z.literal('template'),
    template_id: opaqueId,
    account_id: opaqueId,
    content: z.string().refine((s) => Buffer.byteLength(s) <= MAX_TEMPLATE_BYTES, 'must be at most 512 KiB'),
    content_type: z.enum(['html', 'text']).default('html'),
    engine: z.literal('handlebars').default('handlebars'),
    props: boundedJsonObject(MAX_PROPS_DEPTH, MAX_STORED_PROPS_BYTES).nullable().default(null),
    deleted: z.boolean().default(false),
    version,
  }),
  z.object({
    type: z.literal('workflow'),
    workflow_id: positiveId,
    list_id: positiveId,
    name: z.string().max(512).default(''),
    version,
  }),
] as const;

export const catalogSchema = z.discriminatedUnion('type', catalogSchemas);
export type CatalogRecord = z.infer<typeof catalogSchema>;
export type ListRecord = Extract<CatalogRecord, { type: 'list' }>;
export type UserRecord = Extract<CatalogRecord, { type: 'user' }>;
export type ListAccessRecord = Extract<CatalogRecord, { type: 'list_access' }>;
export type SmtpAccountRecord = Extract<CatalogRecord, { type: 'smtp_account' }>;
export type TemplateRecord = Extract<CatalogRecord, { type: 'template' }>;
export type WorkflowRecord = Extract<CatalogRecord, { type: 'workflow' }>;
