// The query-string parser (ORDA query grammar plus REST's `begin` and EXCEPT): a recursive
// descent over the text, producing the AST of ast.ts or a DatasetError that quotes the query and
// points at the offset and what was expected. Pure: no model, no database.
//
// Precedence, loosest first: OR (|, ||) < AND (&, &&) = EXCEPT < NOT < parentheses. AND and EXCEPT
// are read left to right: `a EXCEPT b AND c` is `a AND NOT b AND c`.

import { MAX_IN_LIST, MAX_QUERY_DEPTH, MAX_QUERY_LENGTH, MAX_QUERY_PARAMS } from '../config/limits.js';
import { DatasetError } from '../errors/dataset-error.js';
import type { Comparator, OrderItem, ParsedQuery, PathRef, PathStep, QueryNode, ValueRef } from './ast.js';
import { LruCache, PLAN_CACHE_ENTRIES, PLAN_TEXT_LENGTH, planStats } from './plan-cache.js';

const NAME = /[A-Za-z_][A-Za-z0-9_]*/y;
// (digits after a dot only with the dot: `\d+\.?\d*` would split a long run of digits many ways)
const NUMBER = /^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
/** A logical keyword where a value would start or go on: it ends the value (as #keyword reads it). Sticky: tested in place. */
const KEYWORD_AHEAD = /(?:and|or|except|order\s+by)(?![A-Za-z0-9_.])/iy;
/**
 * Characters an unquoted value may not begin with right after a comparator: what follows `=~ 'x'`
 * or `=> 5` is a mistyped comparator far more often than a value, and would be read as the text
 * "~ 'x'" or "> 5". Such a value is written quoted, or given through a placeholder.
 */
const COMPARATOR_CHARS = '=!<>#%~';
/** Symbols, longest first so that `===` is not read as `==` then `=`. */
const SYMBOLS: [string, Comparator][] = [['===', '==='], ['!==', '!=='], ['==', '=='], ['!=', '!='], ['<=', '<='], ['>=', '>='], ['=', '='], ['#', '#'], ['<', '<'], ['>', '>'], ['%', '%']];

export function parseQuery(text: string): ParsedQuery {
  // (a tree is never changed once made: every reader shares it, and resolve.ts keeps its paths by its nodes)
  const kept = parsed.get(text);
  if (kept) {
    planStats.parseHits++;
    return kept;
  }
  planStats.parses++;
  const query = new Parser(text, QUERY).query();
  if (text.length <= PLAN_TEXT_LENGTH) parsed.set(text, query);
  return query;
}

/** The query texts parsed lately (plan-cache.ts): what fails to parse is not kept, and fails again the same way. */
const parsed = new LruCache<string, ParsedQuery>(PLAN_CACHE_ENTRIES);

/** How many query texts are kept parsed (tests: the cache stays bounded). */
export function parsedQueries(): number {
  return parsed.size;
}

/**
 * Parses an order string on its own ("lastName desc, employer.name"), as $orderby and
 * selection.orderBy() give it: the grammar of a query's `order by` clause, failing with
 * INVALID_ORDER_BY.
 */
export function parseOrderList(text: string): OrderItem[] {
  const p = new Parser(text, ORDER_LIST);
  const items = p.orderList();
  p.end('a comma and another attribute to sort by, or the end of the order');
  return items;
}

/** Parses an attribute path on its own (the value of a :n placeholder standing for a path). */
export function parsePathText(text: string): Extract<PathRef, { kind: 'path' }> {
  const p = new Parser(text, QUERY);
  const path = p.path();
  p.end('the end of the attribute path');
  if (path.kind !== 'path') throw new DatasetError('INVALID_FILTER', `${JSON.stringify(text)} is not an attribute path`);
  return path;
}

/** What is being read, as failures name it. */
interface TextKind {
  readonly code: 'INVALID_FILTER' | 'INVALID_ORDER_BY';
  readonly noun: string;
}
const QUERY: TextKind = { code: 'INVALID_FILTER', noun: 'query' };
const ORDER_LIST: TextKind = { code: 'INVALID_ORDER_BY', noun: 'order-by string' };

class Parser {
  #at = 0;
  #depth = 0;

  constructor(readonly text: string, readonly kind: TextKind) {
    if (text.length > MAX_QUERY_LENGTH) {
      throw new DatasetError('LIMIT_EXCEEDED', `the ${kind.noun} is ${text.length} characters long; at most ${MAX_QUERY_LENGTH} are read`);
    }
  }

  query(): ParsedQuery {
    this.#space();
    let where: QueryNode | null = null;
    if (!this.#atOrderBy() && !this.#done()) where = this.#or();
    let orderBy: OrderItem[] = [];
    if (this.#atOrderBy()) {
      this.#keyword('order');
      this.#space();
      if (!this.#keyword('by')) this.#fail("'by' after 'order'");
      orderBy = this.orderList();
    }
    if (orderBy.length > 0) this.end('a comma and another attribute to sort by, or the end of the query');
    else this.end(where ? 'AND, OR, EXCEPT, ORDER BY or the end of the query' : 'a criterion');
    if (!where && orderBy.length === 0) this.#fail('a criterion');
    return { text: this.text, where, orderBy };
  }

  orderList(): OrderItem[] {
    const items: OrderItem[] = [];
    do {
      this.#space();
      const path = this.path();
      this.#space();
      let descending = false;
      if (this.#keyword('desc')) descending = true;
      else this.#keyword('asc');
      items.push({ path, descending });
      this.#space();
    } while (this.#eat(','));
    return items;
  }

  end(expected: string): void {
    this.#space();
    if (!this.#done()) this.#fail(expected);
  }

  #or(): QueryNode {
    const at = this.#at;
    const items = [this.#and()];
    while (this.#logical(['||', '|'], 'or')) items.push(this.#and());
    return items.length === 1 ? items[0] : { kind: 'or', items, at };
  }

  #and(): QueryNode {
    const at = this.#at;
    const items = [{ node: this.#unary(), except: false }];
    for (;;) {
      if (this.#logical(['&&', '&'], 'and')) items.push({ node: this.#unary(), except: false });
      else if (this.#logical([], 'except')) items.push({ node: this.#unary(), except: true });
      else break;
    }
    return items.length === 1 ? items[0].node : { kind: 'and', items, at };
  }

  #unary(): QueryNode {
    this.#space();
    const at = this.#at;
    if (this.#depth > MAX_QUERY_DEPTH) throw new DatasetError('LIMIT_EXCEEDED', `the query nests deeper than ${MAX_QUERY_DEPTH} levels (at offset ${at} of "${this.text}")`);
    const save = this.#at;
    if (this.#keyword('not')) {
      this.#space();
      // NOT applies to what follows: a parenthesised group or one criterion
      this.#depth++;
      const operand = this.#unary();
      this.#depth--;
      return { kind: 'not', operand, at };
    }
    this.#at = save;
    if (this.#eat('(')) {
      this.#depth++;
      const inner = this.#or();
      this.#depth--;
      this.#space();
      if (!this.#eat(')')) this.#fail("')' to close the '(' at offset " + at);
      return inner;
    }
    return this.#criterion();
  }

  #criterion(): QueryNode {
    const at = this.#at;
    const path = this.path();
    this.#space();
    const op = this.#comparator();
    this.#space();
    const c = this.text[this.#at];
    if (op !== 'IN' && c !== undefined && COMPARATOR_CHARS.includes(c)) {
      this.#fail(`a value after ${op}`, {
        why: `an unquoted value cannot begin with ${[...COMPARATOR_CHARS].join(' ')}: correct the comparator, or write the value quoted or as a :1 placeholder with $params`,
      });
    }
    const value = op === 'IN' ? this.#inValue() : this.#value(false);
    return { kind: 'compare', path, op, value, at };
  }

  path(): PathRef {
    const at = this.#at;
    if (this.text[this.#at] === ':') return { kind: 'pathParam', index: this.#paramIndex(), at };
    const steps: PathStep[] = [];
    do {
      NAME.lastIndex = this.#at;
      const m = NAME.exec(this.text);
      if (!m) this.#fail(steps.length === 0 ? 'an attribute name' : 'an attribute name after the dot');
      this.#at += m[0].length;
      let step: PathStep = { name: m[0] };
      if (this.#eat('[')) {
        const letter = /[A-Za-z]?/y;
        letter.lastIndex = this.#at;
        const l = (letter.exec(this.text) as RegExpExecArray)[0];
        this.#at += l.length;
        if (!this.#eat(']')) this.#fail("']' (a collection step is written name[] or name[a])");
        step = { ...step, element: l === '' ? null : l.toLowerCase() };
      }
      if (this.#eat('{')) {
        const digits = /[0-9]+/y;
        digits.lastIndex = this.#at;
        const d = digits.exec(this.text);
        if (!d || Number(d[0]) === 0) this.#fail('a class index of 1 or more in {…}');
        this.#at += d[0].length;
        if (!this.#eat('}')) this.#fail("'}' to close the class index");
        step = { ...step, classIndex: Number(d[0]) };
      }
      steps.push(step);
    } while (this.#eat('.'));
    return { kind: 'path', steps, text: this.text.slice(at, this.#at), at };
  }

  #comparator(): Comparator {
    for (const [sym, op] of SYMBOLS) if (this.text.startsWith(sym, this.#at)) {
      this.#at += sym.length;
      return op;
    }
    const save = this.#at;
    if (this.#keyword('is')) {
      const afterIs = this.#at;
      this.#space();
      if (this.#keyword('not')) return 'IS NOT';
      this.#at = afterIs;
      return 'IS';
    }
    if (this.#keyword('in')) return 'IN';
    if (this.#keyword('begin')) return 'begin';
    this.#at = save;
    return this.#fail('a comparator (=, ==, ===, IS, #, !=, !==, IS NOT, <, >, <=, >=, IN, %, begin)');
  }

  #inValue(): ValueRef {
    const at = this.#at;
    if (this.text[this.#at] === ':') return { kind: 'param', index: this.#paramIndex(), at };
    if (!this.#eat('[')) this.#fail("a list in brackets ([1, 2] or ['a', 'b']) or a :n placeholder after IN");
    const items: ValueRef[] = [];
    this.#space();
    if (!this.#eat(']')) {
      do {
        this.#space();
        items.push(this.#value(true));
        if (items.length > MAX_IN_LIST) throw new DatasetError('LIMIT_EXCEEDED', `an IN list of the query has more than ${MAX_IN_LIST} values`);
        this.#space();
      } while (this.#eat(','));
      if (!this.#eat(']')) this.#fail("',' or ']' in the IN list");
    }
    return { kind: 'list', items, at };
  }

  #value(inList: boolean): ValueRef {
    const at = this.#at;
    const c = this.text[this.#at];
    if (c === undefined) return this.#fail('a value');
    if (c === ':' && /[0-9A-Za-z_]/.test(this.text[this.#at + 1] ?? '')) return { kind: 'param', index: this.#paramIndex(), at };
    KEYWORD_AHEAD.lastIndex = this.#at;
    if (KEYWORD_AHEAD.test(this.text)) this.#fail('a value');
    if (c === "'" || c === '"') return { kind: 'literal', value: this.#quoted(c), quoted: true, at };
    const raw = this.#unquoted(inList);
    if (raw === '') return this.#fail('a value');
    if (raw === 'true' || raw === 'false') return { kind: 'literal', value: raw === 'true', quoted: false, at };
    if (raw === 'null') return { kind: 'literal', value: null, quoted: false, at };
    // Leading zeros (a postcode, 01234) keep the value text: the resolver converts text for a
    // number attribute, and a text attribute keeps the zeros.
    if (NUMBER.test(raw) && !/^-?0\d/.test(raw) && Number.isFinite(Number(raw))) return { kind: 'literal', value: Number(raw), quoted: false, at };
    return { kind: 'literal', value: raw, quoted: false, at };
  }

  /** A quoted text; a backslash escapes the next character (\' \" \\). */
  #quoted(q: string): string {
    const start = this.#at;
    let out = '';
    for (let i = this.#at + 1; i < this.text.length; i++) {
      const c = this.text[i];
      if (c === '\\' && i + 1 < this.text.length) out += this.text[++i];
      else if (c === q) {
        this.#at = i + 1;
        return out;
      } else out += c;
    }
    this.#at = start;
    return this.#fail(`the closing ${q} of the text that starts here`);
  }

  /**
   * Unquoted text runs to the next logical operator, ')' or the end (inner spaces kept: name=Acme
   * Industries); in an IN list, to ',' or ']'. Quote values that contain such words. A quote
   * inside it belongs to the value, as 4D's REST page shows (lastName=O'Reilly); only a value that
   * begins with a quote is quoted text.
   */
  #unquoted(inList: boolean): string {
    const start = this.#at;
    let end = start;
    for (let i = start; i <= this.text.length; i++) {
      const c = this.text[i];
      if (c === undefined || c === ')' || c === '&' || c === '|' || (inList && (c === ',' || c === ']'))) break;
      if (/\s/.test(c)) {
        // the whole run of spaces at once, then a keyword right after it? (one pass: no copies)
        let j = i + 1;
        while (j < this.text.length && /\s/.test(this.text[j])) j++;
        KEYWORD_AHEAD.lastIndex = j;
        if (KEYWORD_AHEAD.test(this.text)) break;
        i = j - 1;
        continue;
      }
      end = i + 1;
    }
    this.#at = end;
    return this.text.slice(start, end);
  }

  #paramIndex(): number {
    const at = this.#at;
    const m = /:([0-9]+)/y;
    m.lastIndex = this.#at;
    const r = m.exec(this.text);
    if (!r) {
      return this.#fail(/:[A-Za-z_]/y.test(this.text.slice(at, at + 2)) ? 'a numbered placeholder (:1, :2 …): named placeholders are not available through REST' : 'a placeholder :1, :2 …');
    }
    const n = Number(r[1]);
    if (n < 1 || n > MAX_QUERY_PARAMS) throw new DatasetError(this.kind.code, `${quote(this.text)} at offset ${at}: placeholders are numbered from :1 to :${MAX_QUERY_PARAMS}`);
    this.#at += r[0].length;
    return n;
  }

  #logical(symbols: string[], word: string): boolean {
    const save = this.#at;
    this.#space();
    for (const s of symbols) if (this.text.startsWith(s, this.#at)) {
      this.#at += s.length;
      return true;
    }
    if (this.#keyword(word)) return true;
    this.#at = save;
    return false;
  }

  /** A keyword, in any case, not followed by a name character. */
  #keyword(word: string): boolean {
    const slice = this.text.slice(this.#at, this.#at + word.length);
    if (slice.toLowerCase() !== word) return false;
    if (/[A-Za-z0-9_.]/.test(this.text[this.#at + word.length] ?? '')) return false;
    this.#at += word.length;
    return true;
  }

  #atOrderBy(): boolean {
    const save = this.#at;
    this.#space();
    const yes = /^order\s+by(\s|$)/i.test(this.text.slice(this.#at));
    this.#at = save;
    if (yes) this.#space();
    return yes;
  }

  #eat(s: string): boolean {
    if (!this.text.startsWith(s, this.#at)) return false;
    this.#at += s.length;
    return true;
  }

  #space(): void {
    while (this.#at < this.text.length && /\s/.test(this.text[this.#at])) this.#at++;
  }

  #done(): boolean {
    return this.#at >= this.text.length;
  }

  /** Fails at the current offset: what was expected, what was found (by default the text from there), and why, when that helps. */
  #fail(expected: string, more: { found?: string; why?: string } = {}): never {
    const found = more.found ?? (this.#done() ? `the end of the ${this.kind.noun}` : `'${this.text.slice(this.#at, this.#at + 12)}${this.text.length > this.#at + 12 ? '…' : ''}'`);
    const why = more.why === undefined ? '' : ` (${more.why})`;
    throw new DatasetError(this.kind.code, `cannot read the ${this.kind.noun} ${quote(this.text)} at offset ${this.#at}: expected ${expected}, found ${found}${why}`);
  }
}

function quote(text: string): string {
  return JSON.stringify(text.length > 200 ? `${text.slice(0, 197)}...` : text);
}
