import { z } from 'zod';
import { instant, money, positiveId } from './fields.js';

export const ACTIVITY_TYPES = [
  'send',
  'open',
  'click',
  'purchase',
  'bounce',
  'unsubscribe',
  'spam',
  'event',
  'condition',
  'action',
] as const;
export type ActivityType = (typeof ACTIVITY_TYPES)[number];

const base = {
  event_id: z.string().min(1).max(128),
  list_id: positiveId,
  workflow_id: positiveId,
  subscriber_id: positiveId,
  trigger_id: positiveId.optional(),
  timestamp: instant,
};
/** Reactions to a message carry when that message was sent: they count on that day (docs/records.md "Dating"). */
const reaction = { ...base, sent_at: instant.optional() };
const outcome = { ...base, status: z.enum(['ok', 'failed']), reason: z.string().max(4096).optional() };

export const activitySchemas = [
  z.object({ type: z.literal('send'), ...base }),
  z.object({ type: z.literal('open'), ...reaction }),
  z.object({ type: z.literal('click'), ...reaction }),
  z.object({
    type: z.literal('purchase'),
    ...reaction,
    order_id: z.string().min(1).max(128),
    value_ron: money,
    value_eur: money,
  }),
  z.object({ type: z.literal('bounce'), ...reaction }),
  z.object({ type: z.literal('unsubscribe'), ...reaction }),
  z.object({ type: z.literal('spam'), ...reaction }),
  z.object({ type: z.literal('event'), ...outcome }),
  z.object({ type: z.literal('condition'), ...outcome }),
  z.object({ type: z.literal('action'), ...outcome }),
] as const;

export const activitySchema = z.discriminatedUnion('type', activitySchemas);
export type ActivityRecord = z.infer<typeof activitySchema>;
