// TensorJSFuzz's type and constraint extraction for TensorFlow.js, offline, as JSON.
//
// Usage:
//   node tfjs_dts.js core <tfjs-core/dist>      every op tfjs-core exports (tf.X, tf.image.X ...)
//   node tfjs_dts.js files <a.d.ts> [<a.js>]    the ops of one declaration file (tests)
// `typescript` is resolved through NODE_PATH (the dlfuzz tools cache).
//
// Why a TypeScript AST and not regular expressions: parameter types in tfjs' .d.ts are
// unions of generics, tuples and string literals (`T extends Tensor3D|Tensor4D`,
// `[number, number]|number`, `'valid'|'same'|number|ExplicitPadding`), and the checking
// code in the .js files is arbitrary expressions (`inDepth === $filter.shape[2]`, where
// `inDepth` is a ternary over `dataFormat`). The compiler's parser reads both exactly.
//
// Per op it prints: the exported path, each parameter in order with its TS type as
// "atoms" (tensor rank, tensor-like, number, tuple, literal, array, reference ...), the
// JS default of the implementation, JSDoc texts, the convertToTensor dtype per tensor
// parameter, and every assertion of the implementation's body translated into dlfuzz's
// constraint language (Python syntax) or the reason it could not be.
'use strict';
const fs = require('fs');
const path = require('path');
const ts = require('typescript');

// ---- types (.d.ts) ---------------------------------------------------------------------
const TENSOR_RANKS = {Tensor: null, Scalar: 0, Tensor1D: 1, Tensor2D: 2, Tensor3D: 3,
  Tensor4D: 4, Tensor5D: 5, Tensor6D: 6, Variable: null};
const LIKE = {TensorLike: null, ScalarLike: 0, TensorLike1D: 1, TensorLike2D: 2,
  TensorLike3D: 3, TensorLike4D: 4, TensorLike5D: 5, TensorLike6D: 6};

function refName(node) {
  const n = node.typeName;
  return ts.isIdentifier(n) ? n.text : n.right.text;
}

function atoms(node, tparams) {
  if (!node) return [{k: 'any'}];
  switch (node.kind) {
    case ts.SyntaxKind.UnionType:
      return node.types.flatMap((t) => atoms(t, tparams));
    case ts.SyntaxKind.ParenthesizedType:
      return atoms(node.type, tparams);
    case ts.SyntaxKind.NumberKeyword: return [{k: 'number'}];
    case ts.SyntaxKind.BooleanKeyword: return [{k: 'boolean'}];
    case ts.SyntaxKind.StringKeyword: return [{k: 'string'}];
    case ts.SyntaxKind.NullKeyword: case ts.SyntaxKind.UndefinedKeyword: return [{k: 'null'}];
    case ts.SyntaxKind.AnyKeyword: case ts.SyntaxKind.UnknownKeyword: return [{k: 'any'}];
    case ts.SyntaxKind.LiteralType: {
      const l = node.literal;
      if (ts.isStringLiteral(l)) return [{k: 'lit', v: l.text}];
      if (ts.isNumericLiteral(l)) return [{k: 'lit', v: Number(l.text)}];
      if (l.kind === ts.SyntaxKind.TrueKeyword) return [{k: 'lit', v: true}];
      if (l.kind === ts.SyntaxKind.FalseKeyword) return [{k: 'lit', v: false}];
      if (l.kind === ts.SyntaxKind.NullKeyword) return [{k: 'null'}];
      return [{k: 'other', text: node.getText()}];
    }
    case ts.SyntaxKind.ArrayType:
      return [{k: 'array', of: atoms(node.elementType, tparams)}];
    case ts.SyntaxKind.TupleType:
      return [{k: 'tuple', items: node.elements.map((e) => atoms(e, tparams))}];
    case ts.SyntaxKind.FunctionType: return [{k: 'function'}];
    case ts.SyntaxKind.TypeLiteral: return [{k: 'object', text: node.getText()}];
    case ts.SyntaxKind.TypeReference: {
      const name = refName(node);
      if (tparams[name] !== undefined) return tparams[name];
      if (name in TENSOR_RANKS) {
        let rank = TENSOR_RANKS[name];
        const arg = node.typeArguments && node.typeArguments[0];
        if (rank === null && arg && ts.isTypeReferenceNode(arg)) {
          const m = /^R(\d)$/.exec(arg.getText().replace('Rank.', ''));
          if (m) rank = Number(m[1]);
        }
        return [{k: 'tensor', rank, variable: name === 'Variable'}];
      }
      if (name in LIKE) return [{k: 'tensorlike', rank: LIKE[name]}];
      if (name === 'Array' && node.typeArguments) {
        return [{k: 'array', of: atoms(node.typeArguments[0], tparams)}];
      }
      return [{k: 'ref', name}];
    }
    default:
      return [{k: 'other', text: node.getText()}];
  }
}

function typeParams(fn) {
  const out = {};
  for (const tp of fn.typeParameters || []) {
    out[tp.name.text] = [];  // guard against self-reference while resolving
    out[tp.name.text] = tp.constraint ? atoms(tp.constraint, out) : [{k: 'any'}];
  }
  return out;
}

function jsdoc(node) {
  const out = {doc: '', params: {}};
  const docs = node.jsDoc || [];
  for (const d of docs) {
    out.doc += ts.getTextOfJSDocComment(d.comment) || '';
    for (const tag of d.tags || []) {
      if (ts.isJSDocParameterTag(tag)) {
        let text = ts.getTextOfJSDocComment(tag.comment) || '';
        out.params[tag.name.getText().replace(/:$/, '')] = text.replace(/^[:\s-]+/, '');
      }
    }
  }
  return out;
}

function parseFile(file, text, js) {
  return ts.createSourceFile(file, text, ts.ScriptTarget.ES2020, true,
    js ? ts.ScriptKind.JS : ts.ScriptKind.TS);
}

// Exported ops of one .d.ts: `declare function X_(...)` + `export declare const X: typeof X_`.
function dtsOps(file) {
  const sf = parseFile(file, fs.readFileSync(file, 'utf8'), false);
  const fns = {};
  const exported = [];
  for (const st of sf.statements) {
    if (ts.isFunctionDeclaration(st) && st.name) fns[st.name.text] = st;
    if (ts.isVariableStatement(st) &&
        (st.modifiers || []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) {
      for (const d of st.declarationList.declarations) {
        if (d.type && ts.isTypeQueryNode(d.type)) {
          exported.push([d.name.text, d.type.exprName.getText()]);
        }
      }
    }
  }
  const out = {};
  for (const [name, impl] of exported) {
    const fn = fns[impl];
    if (!fn) continue;
    const tps = typeParams(fn);
    const doc = jsdoc(fn);
    out[name] = {name, impl, file, doc: doc.doc.trim(),
      params: fn.parameters.map((p) => ({name: p.name.getText(), optional: !!p.questionToken,
        rest: !!p.dotDotDotToken, typeText: p.type ? p.type.getText() : '',
        atoms: atoms(p.type, tps), doc: (doc.params[p.name.getText()] || '').trim()})),
      returns: fn.type ? fn.type.getText() : ''};
  }
  return out;
}

// ---- checking code (.js) ----------------------------------------------------------------
const CONVERTERS = new Set(['convertToTensor', 'convertToTensorArray']);

function calleeName(call) {
  const e = call.expression;
  if (ts.isIdentifier(e)) return e.text;
  if (ts.isPropertyAccessExpression(e)) return e.name.text;
  return '';
}

function literal(node) {  // a JS default value as JSON, or undefined
  if (!node) return undefined;
  if (ts.isNumericLiteral(node)) return Number(node.text);
  if (ts.isStringLiteralLike(node)) return node.text;
  if (node.kind === ts.SyntaxKind.TrueKeyword) return true;
  if (node.kind === ts.SyntaxKind.FalseKeyword) return false;
  if (node.kind === ts.SyntaxKind.NullKeyword) return null;
  if (ts.isPrefixUnaryExpression(node) && node.operator === ts.SyntaxKind.MinusToken) {
    const v = literal(node.operand);
    return typeof v === 'number' ? -v : undefined;
  }
  if (ts.isArrayLiteralExpression(node)) {
    const items = node.elements.map(literal);
    return items.every((v) => v !== undefined) ? items : undefined;
  }
  if (ts.isIdentifier(node) && node.text === 'undefined') return null;
  return undefined;
}

class Fail extends Error {}

class Translator {
  constructor(params) {
    this.params = new Set(params);
    this.alias = {};      // local name -> parameter name (convertToTensor, plain copies)
    this.expanded = {};   // local name -> {of, rank}: `let x4D = $x; x4D = reshape($x, [1, ...])`
    this.consts = {};     // const local -> initializer node (inlined when translatable)
    this.dtypes = {};     // parameter -> dtype forced by convertToTensor
    this.reassigned = new Set();
    this.casted = new Set();    // locals re-assigned by cast(): shape kept, dtype not
    this.nullFilled = new Set();  // params given a value under `if (p == null)`
    this.used = new Set();        // parameters the current translation reads
  }

  base(node) {  // the parameter a tensor-valued expression stands for
    if (ts.isParenthesizedExpression(node)) return this.base(node.expression);
    if (ts.isIdentifier(node)) {
      let p = null;
      if (this.alias[node.text] && !this.reassigned.has(node.text)) p = this.alias[node.text];
      else if (this.params.has(node.text) && !this.reassigned.has(node.text)) p = node.text;
      if (p) this.used.add(p);
      return p;
    }
    return null;
  }

  tx(node, depth = 0) {  // JS expression -> Python constraint text (throws Fail)
    if (depth > 12) throw new Fail('expression too deep');
    const r = (n) => this.tx(n, depth + 1);
    if (ts.isParenthesizedExpression(node)) return r(node.expression);
    if (ts.isNumericLiteral(node)) return node.text;
    if (ts.isStringLiteralLike(node)) return JSON.stringify(node.text).replace(/^"|"$/g, "'");
    if (node.kind === ts.SyntaxKind.TrueKeyword) return 'True';
    if (node.kind === ts.SyntaxKind.FalseKeyword) return 'False';
    if (node.kind === ts.SyntaxKind.NullKeyword) return 'None';
    if (ts.isIdentifier(node)) {
      if (node.text === 'undefined') return 'None';
      const b = this.base(node);
      if (b) return b;
      if (this.consts[node.text] && !this.reassigned.has(node.text)) {
        return '(' + r(this.consts[node.text]) + ')';
      }
      if (this.expanded[node.text]) throw new Fail(`rank-expanded local ${node.text} used whole`);
      throw new Fail(`local ${node.text}`);
    }
    if (ts.isPropertyAccessExpression(node)) {
      const prop = node.name.text;
      const obj = node.expression;
      if (ts.isPropertyAccessExpression(obj) && obj.name.text === 'shape' && prop === 'length') {
        return this.rank(obj.expression);
      }
      if (prop === 'rank') return this.rank(obj);
      const b = this.base(obj);
      if (b && prop === 'size') return `${b}.num_element`;
      if (b && prop === 'dtype') {
        if (this.casted.has(obj.getText())) throw new Fail('dtype after cast');
        return `${b}.dtype`;
      }
      if (b && prop === 'length') return `len(${b})`;
      throw new Fail(`property .${prop}`);
    }
    if (ts.isElementAccessExpression(node)) {
      const obj = node.expression;
      if (ts.isPropertyAccessExpression(obj) && obj.name.text === 'shape') {
        return this.dim(obj.expression, node.argumentExpression, depth);
      }
      const b = this.base(obj);
      if (b) return `${b}[${r(node.argumentExpression)}]`;
      throw new Fail('element access');
    }
    if (ts.isPrefixUnaryExpression(node)) {
      if (node.operator === ts.SyntaxKind.ExclamationToken) return `(not ${r(node.operand)})`;
      if (node.operator === ts.SyntaxKind.MinusToken) return `(-${r(node.operand)})`;
      throw new Fail('unary operator');
    }
    if (ts.isConditionalExpression(node)) {
      return `(${r(node.whenTrue)} if ${r(node.condition)} else ${r(node.whenFalse)})`;
    }
    if (ts.isBinaryExpression(node)) return this.binary(node, depth);
    if (ts.isCallExpression(node)) return this.call(node, depth);
    throw new Fail(`syntax ${ts.SyntaxKind[node.kind]}`);
  }

  rank(obj) {
    const b = this.base(obj);
    if (b) return `${b}.ndims`;
    if (ts.isIdentifier(obj) && this.expanded[obj.text]) {
      const e = this.expanded[obj.text];
      return `(${e.rank} if ${e.of}.ndims == ${e.rank - 1} else ${e.of}.ndims)`;
    }
    throw new Fail('rank of a non-parameter');
  }

  dim(obj, index, depth) {
    const b = this.base(obj);
    if (b) return `${b}.shape[${this.tx(index, depth + 1)}]`;
    if (ts.isIdentifier(obj) && this.expanded[obj.text] && ts.isNumericLiteral(index)) {
      // reshape to [1, ...shape] keeps trailing dims: count them from the end
      const e = this.expanded[obj.text];
      const i = Number(index.text);
      if (i >= 1) return `${e.of}.shape[${i - e.rank}]`;
      return `(${e.of}.shape[0] if ${e.of}.ndims == ${e.rank} else 1)`;
    }
    throw new Fail('shape of a non-parameter');
  }

  binary(node, depth) {
    const op = node.operatorToken.kind;
    const K = ts.SyntaxKind;
    const ops = {[K.EqualsEqualsEqualsToken]: '==', [K.EqualsEqualsToken]: '==',
      [K.ExclamationEqualsEqualsToken]: '!=', [K.ExclamationEqualsToken]: '!=',
      [K.LessThanToken]: '<', [K.LessThanEqualsToken]: '<=', [K.GreaterThanToken]: '>',
      [K.GreaterThanEqualsToken]: '>=', [K.AmpersandAmpersandToken]: 'and',
      [K.BarBarToken]: 'or', [K.PlusToken]: '+', [K.MinusToken]: '-', [K.AsteriskToken]: '*',
      [K.SlashToken]: '/', [K.PercentToken]: '%'};
    const py = ops[op];
    if (!py) throw new Fail(`operator ${node.operatorToken.getText()}`);
    const isNull = (n) => n.kind === K.NullKeyword ||
      (ts.isIdentifier(n) && n.text === 'undefined');
    if ((py === '==' || py === '!=') && (isNull(node.left) || isNull(node.right))) {
      const other = isNull(node.left) ? node.right : node.left;
      return `(${this.tx(other, depth + 1)} ${py === '==' ? 'is' : 'is not'} None)`;
    }
    const typeOf = ts.isTypeOfExpression(node.left) ? node.left : null;
    if ((py === '==' || py === '!=') && typeOf && ts.isStringLiteralLike(node.right)) {
      const kinds = {number: "('int', 'float')", string: "('str',)", boolean: "('bool',)"};
      const p = this.base(typeOf.expression);
      if (!p || !kinds[node.right.text]) throw new Fail('typeof');
      return `(${p}.type ${py === '==' ? 'in' : 'not in'} ${kinds[node.right.text]})`;
    }
    // `x.rank === 4` on a rank-expanded local: the parameter has rank 3 or 4
    const side = ts.isPropertyAccessExpression(node.left) ? node.left : null;
    if (py === '==' && side && side.name.text === 'rank' && ts.isIdentifier(side.expression) &&
        this.expanded[side.expression.text] && ts.isNumericLiteral(node.right)) {
      const e = this.expanded[side.expression.text];
      if (Number(node.right.text) === e.rank) return `(${e.of}.ndims in (${e.rank - 1}, ${e.rank}))`;
    }
    return `(${this.tx(node.left, depth + 1)} ${py} ${this.tx(node.right, depth + 1)})`;
  }

  call(node, depth) {
    const name = calleeName(node);
    const a = node.arguments;
    const r = (n) => this.tx(n, depth + 1);
    if (['max', 'min', 'abs'].includes(name) && node.expression.getText().startsWith('Math.')) {
      return `${name}(${a.map(r).join(', ')})`;
    }
    if (name === 'sizeFromShape' && a.length === 1 && ts.isPropertyAccessExpression(a[0]) &&
        a[0].name.text === 'shape') {
      const b = this.base(a[0].expression);
      if (b) return `${b}.num_element`;
    }
    if (name === 'eitherStridesOrDilationsAreOne' && a.length === 2) {
      // the plain `s == 1` first: Algorithm 2 can repair it, a max() of one list not
      const [s, d] = [r(a[0]), r(a[1])];
      return `(${s} == 1 or ${d} == 1 or max(${s}) == 1 or max(${d}) == 1)`;
    }
    if (name === 'stridesOrDilationsArePositive' && a.length === 1) return `(min(${r(a[0])}) > 0)`;
    if (name === 'isArray' && a.length === 1 && this.base(a[0])) {
      return `(${this.base(a[0])}.type in ('ints', 'floats', 'tensors'))`;
    }
    if (name === 'isInt' && a.length === 1) return `(${r(a[0])} % 1 == 0)`;
    throw new Fail(`call ${name}`);
  }
}

// `if (p == null) { p = ... }`: the assignment only fills in a default.
function guardedByNull(node, name) {
  for (let n = node.parent; n; n = n.parent) {
    if (ts.isIfStatement(n)) {
      const c = n.expression;
      return ts.isBinaryExpression(c) && ts.isIdentifier(c.left) && c.left.text === name &&
        [ts.SyntaxKind.EqualsEqualsToken, ts.SyntaxKind.EqualsEqualsEqualsToken]
          .includes(c.operatorToken.kind) &&
        (c.right.kind === ts.SyntaxKind.NullKeyword ||
         (ts.isIdentifier(c.right) && c.right.text === 'undefined'));
    }
    if (ts.isFunctionLike(n)) return false;
  }
  return false;
}

// Assertion calls of a body: util.assert(cond, msg), assertTypesMatch(a, b), ... and
// `if (cond) throw`. Each gives {js, py} or {js, reason}.
function checks(fnNode, paramNames) {
  const t = new Translator(paramNames);
  const out = [];
  const lets = {};
  // pass 1: aliases, consts and reassignments
  const scan = (n) => {
    if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.initializer) {
      const init = n.initializer;
      const isConst = (n.parent.flags & ts.NodeFlags.Const) !== 0;
      if (ts.isCallExpression(init) && CONVERTERS.has(calleeName(init)) && init.arguments.length &&
          ts.isIdentifier(init.arguments[0]) && t.params.has(init.arguments[0].text)) {
        const p = init.arguments[0].text;
        t.alias[n.name.text] = p;
        const dt = init.arguments[3];
        if (dt && ts.isStringLiteralLike(dt)) t.dtypes[p] = dt.text;
        else if (!(p in t.dtypes)) t.dtypes[p] = null;
      } else if (ts.isIdentifier(init) && (t.params.has(init.text) || t.alias[init.text])) {
        if (isConst) t.alias[n.name.text] = t.alias[init.text] || init.text;
        else lets[n.name.text] = t.alias[init.text] || init.text;
      } else if (isConst) {
        t.consts[n.name.text] = init;
      }
    }
    if (ts.isBinaryExpression(n) && n.operatorToken.kind === ts.SyntaxKind.EqualsToken) {
      const targets = ts.isArrayLiteralExpression(n.left) ? n.left.elements : [n.left];
      for (const tg of targets) {
        if (!ts.isIdentifier(tg)) continue;
        const v = n.right;
        const reshape = ts.isCallExpression(v) && calleeName(v) === 'reshape' &&
          v.arguments.length === 2 && ts.isArrayLiteralExpression(v.arguments[1]) &&
          literal(v.arguments[1].elements[0]) === 1 && t.base(v.arguments[0]);
        const conv = ts.isCallExpression(v) && CONVERTERS.has(calleeName(v)) &&
          v.arguments.length && ts.isIdentifier(v.arguments[0]) &&
          t.params.has(v.arguments[0].text) ? v.arguments[0].text : null;
        const isCast = ts.isCallExpression(v) && calleeName(v) === 'cast' && v.arguments.length &&
          ts.isIdentifier(v.arguments[0]) && v.arguments[0].text === tg.text;
        if (conv && !t.params.has(tg.text)) {
          t.alias[tg.text] = conv;
          const dt = v.arguments[3];
          t.dtypes[conv] = dt && ts.isStringLiteralLike(dt) ? dt.text : (t.dtypes[conv] || null);
        } else if (isCast) {
          t.casted.add(tg.text);
        } else if (t.params.has(tg.text) && guardedByNull(n, tg.text)) {
          t.nullFilled.add(tg.text);
        } else if (reshape && lets[tg.text] === t.base(v.arguments[0])) {
          t.expanded[tg.text] = {of: lets[tg.text], rank: v.arguments[1].elements.length};
        } else if (!(ts.isArrayLiteralExpression(n.left) && ts.isCallExpression(v) &&
                     calleeName(v) === 'makeTypesMatch')) {
          t.reassigned.add(tg.text);
        }
      }
    }
    ts.forEachChild(n, scan);
  };
  scan(fnNode.body);
  for (const [name, of] of Object.entries(lets)) {
    if (!t.expanded[name] && !t.reassigned.has(name)) t.alias[name] = of;
    else if (t.expanded[name] && t.reassigned.has(name)) delete t.expanded[name];
  }
  const emit = (node, js, fn) => {
    try {
      t.used = new Set();
      let py = fn();
      for (let c = node, n = node.parent; n && n !== fnNode; c = n, n = n.parent) {
        if (ts.isIfStatement(n) && c !== n.expression) {  // checked only on that branch
          let cond;
          try {
            cond = t.tx(n.expression);
          } catch (e) {
            if (!(e instanceof Fail)) throw e;
            throw new Fail('under an untranslatable if: ' + e.message);
          }
          py = c === n.thenStatement ? `(not ${cond} or ${py})` : `(${cond} or ${py})`;
        }
      }
      const filled = [...t.used].filter((p) => t.nullFilled.has(p));
      if (filled.length) py = '(' + filled.map((p) => `${p} is None`).join(' or ') + ` or ${py})`;
      out.push({js, py});
    } catch (e) {
      if (!(e instanceof Fail)) throw e;
      out.push({js, reason: e.message});
    }
  };
  const visit = (n) => {
    if (ts.isCallExpression(n)) {
      const name = calleeName(n);
      const a = n.arguments;
      const js = n.getText().split('\n')[0].slice(0, 160);
      if (name === 'assert' && a.length >= 1) emit(n, js, () => t.tx(a[0]));
      else if (name === 'assertTypesMatch' && a.length >= 2) {
        emit(n, js, () => {
          const x = t.base(a[0]); const y = t.base(a[1]);
          if (!x || !y) throw new Fail('assertTypesMatch on locals');
          return `${y}.dtype == ${x}.dtype`;
        });
      } else if ((name === 'assertShapesMatch' || name === 'assertAndGetBroadcastShape') &&
                 a.length >= 2) {
        emit(n, js, () => {
          const sh = (e) => ts.isPropertyAccessExpression(e) && e.name.text === 'shape' ?
            t.base(e.expression) : null;
          const x = sh(a[0]); const y = sh(a[1]);
          if (!x || !y) throw new Fail(`${name} on locals`);
          return `${name === 'assertShapesMatch' ? 'SHAPES' : 'BROADCAST'}(${x}, ${y})`;
        });
      } else if (name === 'parseAxisParam' && a.length >= 2) {
        emit(n, js, () => {
          const sh = a[1];
          const x = ts.isPropertyAccessExpression(sh) && sh.name.text === 'shape' ?
            t.base(sh.expression) : null;
          const ax = ts.isIdentifier(a[0]) ? t.base(a[0]) : null;
          if (!x || !ax) throw new Fail('parseAxisParam on locals');
          return `AXIS(${ax}, ${x})`;
        });
      }
    }
    if (ts.isIfStatement(n) && (ts.isThrowStatement(n.thenStatement) ||
        (ts.isBlock(n.thenStatement) && n.thenStatement.statements.length === 1 &&
         ts.isThrowStatement(n.thenStatement.statements[0])))) {
      emit(n, 'if (' + n.expression.getText().slice(0, 150) + ') throw',
        () => `(not ${t.tx(n.expression)})`);
    }
    if (ts.isFunctionLike(n) && n !== fnNode) return;  // closures run later or never
    ts.forEachChild(n, visit);
  };
  visit(fnNode.body);
  return {checks: out, dtypes: t.dtypes};
}

function jsFunctions(file) {
  if (!file || !fs.existsSync(file)) return {};
  const sf = parseFile(file, fs.readFileSync(file, 'utf8'), true);
  const out = {};
  for (const st of sf.statements) {
    if (ts.isFunctionDeclaration(st) && st.name) out[st.name.text] = st;
  }
  return out;
}

function withImpl(op, jsFile) {
  const fn = jsFunctions(jsFile)[op.impl];
  if (!fn) return {...op, js: null};
  const defaults = {};
  for (const p of fn.parameters) {
    if (p.initializer) {
      const v = literal(p.initializer);
      defaults[p.name.getText()] = v === undefined ? {text: p.initializer.getText()} : {value: v};
    }
  }
  const names = fn.parameters.map((p) => p.name.getText());
  return {...op, js: jsFile, defaults, ...checks(fn, names)};
}

// ---- the tfjs-core export table ---------------------------------------------------------
function coreOps(dist) {
  const opsDir = path.join(dist, 'ops');
  const sf = parseFile('ops.d.ts', fs.readFileSync(path.join(opsDir, 'ops.d.ts'), 'utf8'), false);
  const result = [];
  const seen = new Set();
  const add = (api, group, dts, name) => {
    const js = dts.replace(/\.d\.ts$/, '.js');
    const ops = dtsOps(dts);
    const op = ops[name];
    if (!op) return;
    const key = dts + ':' + op.impl;
    if (seen.has(key)) return;
    seen.add(key);
    result.push({api, group, ...withImpl(op, js), file: path.relative(dist, dts)});
  };
  const skipped = [];
  for (const st of sf.statements) {
    if (ts.isExportDeclaration(st) && st.moduleSpecifier) {
      const dts = path.join(opsDir, st.moduleSpecifier.text + '.d.ts');
      if (!fs.existsSync(dts)) continue;
      if (st.exportClause && ts.isNamedExports(st.exportClause)) {
        for (const el of st.exportClause.elements) add('tf.' + el.name.text, 'core', dts, el.name.text);
      } else if (!st.exportClause) {
        for (const name of Object.keys(dtsOps(dts))) add('tf.' + name, 'core', dts, name);
      }
    }
    if (ts.isVariableStatement(st)) {
      for (const d of st.declarationList.declarations) {
        if (!d.type || !ts.isTypeLiteralNode(d.type)) continue;
        const ns = d.name.text;
        const dir = path.join(opsDir, ns);
        const byName = {};
        for (const f of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
          if (!f.endsWith('.d.ts') || f.includes('_test')) continue;
          for (const name of Object.keys(dtsOps(path.join(dir, f)))) byName[name] = path.join(dir, f);
        }
        for (const m of d.type.members) {
          const name = m.name.getText();
          if (byName[name]) add(`tf.${ns}.${name}`, ns, byName[name], name);
          else skipped.push(`tf.${ns}.${name}`);
        }
      }
    }
  }
  return {ops: result, unresolved: skipped};
}

function main(argv) {
  const [mode, a, b] = argv;
  let out;
  if (mode === 'core') out = coreOps(a);
  else if (mode === 'files') {
    out = {ops: Object.values(dtsOps(a)).map((op) => ({api: 'tf.' + op.name, group: 'core',
      ...withImpl(op, b)})), unresolved: []};
  } else {
    process.stderr.write('usage: node tfjs_dts.js core <dist> | files <a.d.ts> [<a.js>]\n');
    return 2;
  }
  out.typescript = ts.version;
  process.stdout.write(JSON.stringify(out));
  return 0;
}

process.exitCode = main(process.argv.slice(2));
