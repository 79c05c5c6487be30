import { storableString } from './string-value-limit.ts'

// The derived fields that become index keys: usage_rollups' rows by model, vendor and service,
// trace_summaries' by user and session. A btree entry holds at most 2,704 bytes, and one span
// with a longer value made every fold that claimed its trace fail, and with it every later fold,
// for every project. Such a field is cut as attribute values are (with the truncation marker),
// to a length whose UTF-8 fits an entry with room for its neighbours; the span's attributes keep
// the whole value.

/** The longest model, vendor, service, user or session kept, in UTF-16 code units (at most 600 bytes of UTF-8: a trace's shape row holds four of them in its key). */
export const MAX_KEY_FIELD_LENGTH = 200

/** `value` as a derived key field is stored: itself, or cut to MAX_KEY_FIELD_LENGTH with the marker. */
export const keyField = (value: string | null): string | null => (value === null ? null : storableString(value, MAX_KEY_FIELD_LENGTH))
