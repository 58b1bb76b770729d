// A page of a selection as its caller sees it, whoever asks (a REST read, a function's selection
// answered): its rows (when the caller writes them as they are) or its entities with what the
// projection inlines, the selection's length and the global stamp, all of one state of the data
// (one statement, or one snapshot when the page reads more), within the answer's budget
// (measured before a big page is read, else counted as it is: answer-size.ts), with its query
// plan and query path when asked (the path recorded for the session's GET /rest/$querypath).

import type { ColumnSpec } from '../../query/plan.js';
import { queryPath, queryPlan } from '../../query/describe.js';
import type { Access } from '../access/access.js';
import { inSnapshot } from '../access/snapshot.js';
import type { Core } from '../datastore.js';
import type { Session } from '../sessions/session.js';
import { accessOf, classOf, countWhere, sourceOf, type EntitySelection } from '../selections/selection.js';
import { countRelated, fetchRelated, type FetchedEntity, type InlineBudget } from './fetch.js';
import { countPage, measurePage, readPageRows } from './page-read.js';
import type { Projection } from './projection.js';

export interface PageRequest {
  readonly skip: number;
  readonly top: number;
  /** what the caller shows of each entity (its attributes, what it inlines) */
  readonly projection: Projection;
  /** the columns the caller writes the page from, when its rows are enough: no entity is made */
  readonly rowColumns?: readonly ColumnSpec[];
  /** what is read of the entities' relations when it is not the projection (Looker Studio's fields) */
  readonly fetch?: Projection;
  /** the lengths of the inline selections are counted ($asArray) */
  readonly countRelated?: boolean;
  /** the selection's query plan, and its query path (recorded for `session`), when it has a condition */
  readonly queryplan?: boolean;
  readonly querypath?: boolean;
  readonly session?: Session;
}

/** What a page's query plan and path are, when asked and the selection has a condition. */
export interface PagePlanParts {
  readonly queryPlan?: unknown;
  readonly queryPath?: unknown;
}

export type Page = {
  /** the selection's length */
  readonly count: number;
  readonly globalStamp: number;
  readonly plan: PagePlanParts;
} & ({ readonly rows: readonly (readonly unknown[])[] } | { readonly entities: FetchedEntity[] });

type PageCore = Pick<Core, 'classOf' | 'snapshot' | 'queryPaths' | 'settledStamp'>;

/**
 * Whether a page reads more than the one statement of its rows (relations inline in entities,
 * $asArray's counts, Looker Studio's fields, a query path's counts): it is then read in a
 * snapshot, so that all it reads is of one state of the data.
 */
export function pageReadsMore(req: PageRequest): boolean {
  return req.querypath === true || req.countRelated === true || req.fetch !== undefined || (!req.rowColumns && req.projection.related);
}

/**
 * A page of the selection `select` makes through the access it is given: in one snapshot with
 * the reads that make it when `sourceReads` (a relation followed, a stored set), or when the page
 * reads more than one statement; else through `access` as it is. `request` is asked for after a
 * source that reads is made, before one that does not (what fails first, fails first).
 */
export async function readPageOf(core: PageCore, access: Access, select: (access: Access) => EntitySelection | Promise<EntitySelection>, request: () => PageRequest, budget: InlineBudget, sourceReads: boolean): Promise<Page> {
  // A datastore that tracks changes answers a stamp a sync may resume from (`__GlobalStamp > :1`
  // with the page's __GlobalStamp): where the engine's stamp may name a tracked write not yet
  // committed (PostgreSQL's sequence), the settled stamp, read before anything of the page — and
  // before its snapshot, whose data would be older than a stamp read inside it.
  const settling = core.settledStamp();
  if (settling) {
    const settled = await settling;
    const page = await readPageUnsettled(core, access, select, request, budget, sourceReads);
    return { ...page, globalStamp: Math.min(settled, page.globalStamp) };
  }
  return readPageUnsettled(core, access, select, request, budget, sourceReads);
}

function readPageUnsettled(core: PageCore, access: Access, select: (access: Access) => EntitySelection | Promise<EntitySelection>, request: () => PageRequest, budget: InlineBudget, sourceReads: boolean): Promise<Page> {
  if (sourceReads) return inSnapshot(core, access, async (a) => {
    const selection = await select(a);
    return readPage(core, selection, request(), budget);
  });
  const req = request();
  if (pageReadsMore(req)) return inSnapshot(core, access, async (a) => readPage(core, await select(a), req, budget));
  return (async () => readPage(core, await select(access), req, budget))();
}

/** A page of `selection`, read through its own access (see the header). */
export async function readPage(core: PageCore, selection: EntitySelection, req: PageRequest, budget: InlineBudget): Promise<Page> {
  const dc = classOf(selection);
  const access = accessOf(selection);
  const { skip, top, rowColumns } = req;
  // (a page that could be big is measured before it is read, else counted as it is: answer-size.ts)
  const measuredFirst = await measurePage(selection, skip, top, rowColumns ?? dc.columns, budget.bytes);
  if (rowColumns) {
    const { rows, count, globalStamp } = await readPageRows(selection, skip, top, rowColumns);
    if (!measuredFirst) countPage(selection, rows, budget.bytes);
    return { rows, count, globalStamp, plan: await planParts(core, selection, req) };
  }
  const { rows, count, globalStamp } = await readPageRows(selection, skip, top, dc.columns);
  if (!measuredFirst) countPage(selection, rows, budget.bytes);
  const entities = await fetchRelated(core, rows.map((row) => dc.entityFromValues(row, access)), req.fetch ?? req.projection, access, budget);
  if (req.countRelated) await countRelated(entities, req.projection, access);
  return { entities, count, globalStamp, plan: await planParts(core, selection, req) };
}

/** The query plan and path of the page, when asked and the selection has a condition (the path recorded for the session). */
async function planParts(core: PageCore, selection: EntitySelection, req: PageRequest): Promise<PagePlanParts> {
  const where = sourceOf(selection).where;
  if (!where || (!req.queryplan && !req.querypath)) return {};
  const plan = req.queryplan ? queryPlan(where) : undefined;
  if (!req.querypath) return { queryPlan: plan };
  const path = await queryPath(where, (w) => countWhere(selection, w));
  if (req.session) await core.queryPaths.record(req.session, path);
  return { queryPlan: plan, queryPath: path };
}
