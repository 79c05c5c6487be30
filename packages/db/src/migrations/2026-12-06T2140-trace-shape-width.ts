import { sql, type Kysely } from 'kysely'

// Frozen in time: never import application code here.
//
// A trace's shape (migration 2026-12-06T1620) is its models, response models, vendors and services
// as JSON text, and the value of its usage_rollups rows, part of their key. A btree entry holds at
// most 2,704 bytes: a trace of five or more distinct models or services of 600 bytes each (the
// longest a span's key field is kept) failed the fold, and every fold after it, for every project.
// A shape wider than 2,000 bytes now gets no row: tracewell_trace_shape gives null for it (the
// fold's own key function gives null at the same width), so the check and erasure's
// recomputations leave it out as the fold does. A stored trace that wide could not have been
// folded, so no row changes here.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace function tracewell_trace_shape(models text[], response_models text[], vendors text[], services text[]) returns text
    language sql immutable parallel safe as $$
      select case when octet_length(shape) <= 2000 then shape end from (
        select '[' || array_to_json(coalesce(models, '{}'))::text || ',' || array_to_json(coalesce(response_models, '{}'))::text || ','
          || array_to_json(coalesce(vendors, '{}'))::text || ',' || array_to_json(coalesce(services, '{}'))::text || ']' as shape
      ) as s
    $$`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace function tracewell_trace_shape(models text[], response_models text[], vendors text[], services text[]) returns text
    language sql immutable parallel safe as $$
      select '[' || array_to_json(coalesce(models, '{}'))::text || ',' || array_to_json(coalesce(response_models, '{}'))::text || ','
        || array_to_json(coalesce(vendors, '{}'))::text || ',' || array_to_json(coalesce(services, '{}'))::text || ']'
    $$`.execute(db)
}
