/*
 * _proftop_fast_step.c - the helper's C paths that follow the step (see
 * _proftop_fast.c): the outermost module call, an optimizer's step,
 * zero_grad and a scheduler's step, backward, a DataLoader's fetch and the
 * step that ends there. Each takes the common case of a training loop in
 * its stride and hands everything else, before it has changed anything,
 * to the Python wrapper (slow), which holds every rule (proftop_steps).
 */
#include "_proftop_fast.h"

/* ---- the outermost module call, in a training loop's stride
 *
 * proftop_phases._root_enter and _root_exit's common case: a training job
 * (a backward or optimizer step seen) fed by a DataLoader, the step not
 * ending here (no end pending, no backward-rule end), the model's label map
 * made and holding no compiled region, torch not compiling or exporting.
 * The Forward phase (a loss: the Forward phase and its operator), the step's
 * start when none is open, the samples and tokens of its input, as the
 * Python code does; anything else is the Python wrapper's (slow), which
 * this leaves the call to before it has done anything. root_setup() turns
 * it on with the globals it reads (NULL until then: every outermost call is
 * slow's). */
static PyObject *g_steps, *g_phases, *g_compiler, *g_tensor; /* root_setup's */
static unsigned long long g_taken[3]; /* calls these paths took: outermost, step, fetch */
static PyObject *k_train, *k_batch_fixed, *k_activity, *k_labels, *k_loss_base, *k_grad_enabled,
	*k_feed_on, *k_feed_look, *k_fwd_batch, *k_loss_ids, *k_root_exit, *k_flag, *k_data,
	*k_shape, *k_is_fp, *g_key_comp, *g_key_seq;

enum { PHASE_FORWARD = 2, ROOT_MODEL = 2, ROOT_LOSS = 3 };

/* A global of proftop_auto that is 0 or absent (an int otherwise nonzero, or
 * anything else, is not). */
static int int_zero(PyObject *d, PyObject *key)
{
	PyObject *v = PyDict_GetItem(d, key);
	if (!v)
		return 1;
	if (!PyLong_Check(v))
		return 0;
	long x = PyLong_AsLong(v);
	if (x == -1 && PyErr_Occurred()) {
		PyErr_Clear();
		return 0;
	}
	return x == 0;
}

/* The model's label map (proftop_auto._labels, a WeakKeyDictionary), borrowed
 * from the dict that holds it, or NULL where it has none yet. */
static PyObject *labels_of(PyObject *mod)
{
	PyObject *wk = PyDict_GetItem(g_globals, k_labels);
	if (!wk || wk == Py_None)
		return NULL;
	PyObject *data = PyObject_GetAttr(wk, k_data);
	if (!data) {
		PyErr_Clear();
		return NULL;
	}
	PyObject *ref = PyWeakref_NewRef(mod, NULL);
	PyObject *m = ref && PyDict_Check(data) ? PyDict_GetItem(data, ref) : NULL;
	Py_XDECREF(ref);
	Py_DECREF(data); /* the WeakKeyDictionary holds it, and so the map */
	if (PyErr_Occurred())
		PyErr_Clear();
	return m && PyDict_Check(m) ? m : NULL;
}

/* proftop_steps' function key (_fwd_batch, _loader_batch) called with a and b:
 * its (samples, tokens), 0 and 0 when it fails. */
static void count_py(PyObject *key, PyObject *a, PyObject *b, long long *n, long long *tok)
{
	PyObject *fn = PyDict_GetItem(g_steps, key);
	PyObject *r = fn && a && b ? PyObject_CallFunctionObjArgs(fn, a, b, NULL) : NULL;
	*n = *tok = 0;
	if (r && PyTuple_Check(r) && PyTuple_Size(r) == 2) {
		*n = PyLong_AsLongLong(PyTuple_GetItem(r, 0));
		*tok = PyLong_AsLongLong(PyTuple_GetItem(r, 1));
	}
	Py_XDECREF(r);
	if (PyErr_Occurred()) {
		PyErr_Clear();
		*n = *tok = 0;
	}
}

/* proftop_steps._fwd_batch(names, args) in Python (args without self). */
static void fwd_batch_py(PyObject *names, PyObject *args, long long *n, long long *tok)
{
	PyObject *rest = PyTuple_GetSlice(args, 1, PyTuple_Size(args));
	count_py(k_fwd_batch, names, rest, n, tok);
	Py_XDECREF(rest);
}

/* The samples and tokens of the outermost call's input: a floating-point
 * tensor first (the common case) here, its first dimension; anything else
 * by _fwd_batch itself. */
static void fwd_batch(PyObject *names, PyObject *args, long long *n, long long *tok)
{
	*n = *tok = 0;
	if (PyTuple_Size(args) < 2)
		return; /* keywords only: first_tensor(()) finds none */
	PyObject *t = PyTuple_GetItem(args, 1);
	int seq = PyDict_GetItem(names, g_key_seq) != NULL;
	if (seq || PyObject_IsInstance(t, g_tensor) != 1) {
		if (PyErr_Occurred())
			PyErr_Clear();
		fwd_batch_py(names, args, n, tok);
		return;
	}
	PyObject *shape = PyObject_GetAttr(t, k_shape);
	PyObject *d0 = shape && PySequence_Size(shape) > 0 ? PySequence_GetItem(shape, 0) : NULL;
	PyObject *fp = d0 ? PyObject_CallMethodObjArgs(t, k_is_fp, NULL) : NULL;
	if (fp == Py_True)
		*n = PyLong_AsLongLong(d0);
	Py_XDECREF(shape);
	Py_XDECREF(d0);
	if (PyErr_Occurred()) {
		PyErr_Clear();
		*n = 0;
	} else if (fp != Py_True) {
		fwd_batch_py(names, args, n, tok); /* a 0-d tensor, token ids: the Python rules */
	}
	Py_XDECREF(fp);
}

/* Whether the outermost call can be taken here (nothing changed yet); *loss_id
 * set for a loss, *names (borrowed) for a model. */
static int root_fits(TSBase *ts, PyObject *mod, unsigned long *loss_id, PyObject **names)
{
	if (!g_steps || ts->compiling)
		return 0;
	if (g_compiler && PyDict_GetItem(g_compiler, k_flag) != Py_False)
		return 0; /* torch.compile or torch.export runs the model */
	if (ts->gen_open == Py_True || ts->bwd_end == Py_True || !is_none(ts->pending))
		return 0;
	if (PyDict_GetItem(g_globals, k_train) != Py_True ||
	    PyDict_GetItem(g_steps, k_feed_on) != Py_False || !int_zero(g_steps, k_feed_look))
		return 0;
	PyObject *lb = PyDict_GetItem(g_globals, k_loss_base);
	int loss = lb ? PyObject_IsInstance(mod, lb) : 0;
	if (loss < 0) {
		PyErr_Clear();
		return 0;
	}
	*loss_id = 0;
	*names = NULL;
	if (loss) {
		PyObject *ids = PyDict_GetItem(g_phases, k_loss_ids);
		PyObject *v = ids && PyDict_Check(ids) ? PyDict_GetItem(ids, (PyObject *)Py_TYPE(mod))
						       : NULL;
		*loss_id = v ? PyLong_AsUnsignedLong(v) : 0;
		if (PyErr_Occurred()) {
			PyErr_Clear();
			*loss_id = 0;
		}
		return *loss_id && *loss_id <= UINT32_MAX;
	}
	*names = labels_of(mod);
	return *names && !PyDict_GetItem(*names, g_key_comp);
}

/* The outermost call, taken (root_fits said so). */
static PyObject *root_call(Wrap *w, TSBase *ts, PyObject *args, PyObject *kw,
			   unsigned long loss_id, PyObject *names)
{
	PyObject *mod = PyTuple_GetItem(args, 0);
	int code;
	PyDict_SetItem(g_globals, k_activity, Py_True);
	if (loss_id) {
		phase_push(PHASE_FORWARD);
		op_push((uint32_t)loss_id);
		ts_set(&ts->names, Py_None);
		ts_set(&ts->root, Py_None);
		code = ROOT_LOSS;
	} else {
		Py_INCREF(names);
		if (is_none(ts->start)) {
			PyObject *now = PyLong_FromUnsignedLongLong(clock_now());
			ts_set(&ts->start, now);
			Py_XDECREF(now);
		}
		phase_push(PHASE_FORWARD);
		ts_set(&ts->names, names);
		if (int_zero(g_globals, k_batch_fixed)) {
			PyObject *ge = PyDict_GetItem(g_globals, k_grad_enabled);
			PyObject *on = ge ? PyObject_CallObject(ge, NULL) : NULL;
			if (on == Py_True) {
				long long n, tok;
				fwd_batch(names, args, &n, &tok);
				ts->fwd_samples += n;
				ts->fwd_tokens += tok;
			}
			Py_XDECREF(on);
		}
		ts_set(&ts->root, mod);
		Py_DECREF(names);
		code = ROOT_MODEL;
	}
	if (PyErr_Occurred())
		PyErr_Clear(); /* the helper's bookkeeping, never the program's */
	ts->depth = 1;
	PyObject *r = PyObject_Call(w->orig, args, kw);
	ts->depth = 0;
	PyObject *et, *ev, *etb;
	PyErr_Fetch(&et, &ev, &etb);
	if (PyDict_GetItem(g_globals, k_train) == Py_True &&
	    PyDict_GetItem(g_steps, k_feed_on) == Py_False) {
		if (code == ROOT_LOSS)
			op_pop();
		phase_pop();
		ts_set(&ts->names, Py_None);
		ts_set(&ts->root, Py_None);
	} else {
		/* the job is no longer training, or a loop fed by a generator:
		 * _root_exit's rules */
		PyObject *fn = PyDict_GetItem(g_phases, k_root_exit);
		PyObject *c = PyLong_FromLong(code);
		PyObject *x = fn && c ? PyObject_CallFunctionObjArgs(fn, (PyObject *)ts, c, NULL) : NULL;
		Py_XDECREF(c);
		Py_XDECREF(x);
		if (PyErr_Occurred())
			PyErr_Clear();
	}
	PyErr_Restore(et, ev, etb);
	g_calls++;
	return r;
}

/* ---- an optimizer's step, zero_grad, a scheduler's step; backward
 *
 * proftop_phases._wrap_opt_method's and _wrap_phase's (backward, grad)
 * common case, as the outermost call's above: a training job fed by a
 * DataLoader whose step does not end where this call begins (an optimizer
 * step, zero_grad and a scheduler's step close the step being built; the
 * next fetch ends it). Their Python wrappers stay functions (what torch and
 * LR schedulers look for on an optimizer's step) whose body is one call of
 * this: fast(self, args, kwargs), or fast(args, kwargs) for backward. */
enum { PHASE_BACKWARD = 3, PHASE_OPTIMIZATION = 4 };
static PyObject *k_opt_seen, *k_method_ids, *k_feed_arm;

/* The operator id of obj's method (proftop_phases._method_ids), 0 when it
 * has none yet. */
static unsigned long method_id(PyObject *obj, PyObject *meth)
{
	PyObject *ids = PyDict_GetItem(g_phases, k_method_ids);
	PyObject *key = ids && PyDict_Check(ids) ? PyTuple_Pack(2, (PyObject *)Py_TYPE(obj), meth)
						 : NULL;
	PyObject *v = key ? PyDict_GetItem(ids, key) : NULL;
	Py_XDECREF(key);
	unsigned long id = v ? PyLong_AsUnsignedLong(v) : 0;
	if (PyErr_Occurred()) {
		PyErr_Clear();
		id = 0;
	}
	return id <= UINT32_MAX ? id : 0;
}

PyObject *step_call(PyObject *o, PyObject *cargs, PyObject *ckw)
{
	Wrap *w = (Wrap *)o;
	long kind = PyLong_AsLong(w->aux2);
	int opt = kind != K_BACKWARD;
	if (ckw || PyTuple_Size(cargs) != 2 + opt) {
		PyErr_SetString(PyExc_TypeError, "step_call: (self,) args, kwargs");
		return NULL;
	}
	PyObject *self = opt ? PyTuple_GetItem(cargs, 0) : NULL;
	PyObject *args = PyTuple_GetItem(cargs, opt);
	PyObject *kw = PyTuple_GetItem(cargs, opt + 1);
	if (!PyTuple_Check(args))
		return NULL;
	if (kw == Py_None || (PyDict_Check(kw) && PyDict_Size(kw) == 0))
		kw = NULL;
	if (PyDict_GetItem(g_globals, k_off) != Py_False)
		return call_with(w->orig, self, args, kw);
	TSBase *ts = cur_ts();
	if (!ts || !g_steps)
		return call_with(w->slow, self, args, kw);
	PyObject **flag = opt ? &ts->in_opt : &ts->in_bwd;
	if (*flag == Py_True || ts->compiling)
		return call_with(w->orig, self, args, kw); /* super().step(), an inner backward */
	/* does it fit? nothing changed yet */
	int train = PyDict_GetItem(g_globals, k_train) == Py_True;
	if (PyDict_GetItem(g_steps, k_feed_on) != Py_False || ts->gen_open == Py_True)
		return call_with(w->slow, self, args, kw);
	int begin = 0; /* _begin(ts): the step's start, if none */
	if (kind != K_OPT_EXTRA) {
		if (!train || (kind == K_OPT_STEP && PyDict_GetItem(g_globals, k_opt_seen) != Py_True))
			return call_with(w->slow, self, args, kw);
		if (is_none(ts->pending)) {
			if (ts->bwd_end == Py_True)
				return call_with(w->slow, self, args, kw);
			begin = 1;
		} else if (kind == K_BACKWARD) {
			return call_with(w->slow, self, args, kw); /* the step ends here */
		}
	}
	int pushed = kind != K_OPT_EXTRA || !is_none(ts->start) || !is_none(ts->pending);
	unsigned long id = 0;
	if (pushed && opt) {
		id = method_id(self, w->aux);
		if (!id)
			return call_with(w->slow, self, args, kw); /* it names it */
	}
	g_taken[1]++;
	Py_INCREF(ts);
	PyDict_SetItem(g_globals, k_activity, Py_True);
	if (begin && is_none(ts->start)) {
		PyObject *now = PyLong_FromUnsignedLongLong(clock_now());
		ts_set(&ts->start, now);
		Py_XDECREF(now);
	}
	if (pushed) {
		phase_push(opt ? PHASE_OPTIMIZATION : PHASE_BACKWARD);
		if (opt)
			op_push((uint32_t)id);
	}
	if (PyErr_Occurred())
		PyErr_Clear();
	ts_set(flag, Py_True);
	PyObject *r = call_with(w->orig, self, args, kw);
	ts_set(flag, Py_False);
	PyObject *et, *ev, *etb;
	PyErr_Fetch(&et, &ev, &etb);
	if (pushed) {
		if (opt)
			op_pop();
		phase_pop();
		if (kind == K_OPT_STEP || (kind == K_OPT_EXTRA && !is_none(ts->pending))) {
			PyObject *now = PyLong_FromUnsignedLongLong(clock_now());
			ts_set(&ts->pending, now);
			Py_XDECREF(now);
		}
		if (PyDict_GetItem(g_steps, k_feed_on) != Py_False) {
			PyObject *fn = PyDict_GetItem(g_steps, k_feed_arm);
			PyObject *x = fn ? PyObject_CallFunctionObjArgs(fn, (PyObject *)ts, NULL) : NULL;
			Py_XDECREF(x);
		}
	}
	if (kind == K_BACKWARD && PyDict_GetItem(g_globals, k_opt_seen) != Py_True)
		ts_set(&ts->bwd_end, Py_True);
	if (PyErr_Occurred())
		PyErr_Clear();
	PyErr_Restore(et, ev, etb);
	Py_DECREF(ts);
	return r;
}

/* ---- a DataLoader's fetch: where a step ends and the next begins
 *
 * proftop_phases._wrap_phase's (fetch, samples) and proftop_data's
 * __next__ for an iterator without workers (no queue to report), and
 * proftop_steps._emit_step's common case: a step closed at its optimizer
 * step (or an iteration's last, a GAN's), under the rule already said, no
 * capture asked for or under way, not the partial first step of an attach.
 * Anything else: the Python chain (slow), before anything is done. */
enum { PHASE_DATALOADER = 1 };
static PyObject *k_ctl, *k_rule, *k_steps, *k_ncalls, *k_calls_base, *k_cost_ps, *k_helper_stats,
	*k_step_tokens, *k_attach, *k_batch_rule, *k_fetch_rule_off, *k_check_reader, *k_control,
	*k_loader_batch, *k_cap, *k_pending, *k_seen, *k_tasks, *k_dim, *k_dict;

static long long int_of(PyObject *d, PyObject *key)
{
	PyObject *v = d ? PyDict_GetItem(d, key) : NULL;
	long long x = v && PyLong_Check(v) ? PyLong_AsLongLong(v) : 0;
	if (PyErr_Occurred()) {
		PyErr_Clear();
		x = 0;
	}
	return x;
}

/* proftop_capture's globals (the module proftop_auto._ctl), borrowed, or NULL. */
static PyObject *ctl_dict(void)
{
	PyObject *ctl = PyDict_GetItem(g_globals, k_ctl);
	if (!ctl || ctl == Py_None)
		return NULL;
	PyObject *d = PyObject_GetAttr(ctl, k_dict);
	if (!d) {
		PyErr_Clear();
		return NULL;
	}
	Py_DECREF(d); /* the module holds it */
	return PyDict_Check(d) ? d : NULL;
}

/* The rule the step would be emitted under is the one said already. */
static int rule_same(void)
{
	const char *want =
		PyDict_GetItem(g_globals, k_train) != Py_True	   ? "forward"
		: PyDict_GetItem(g_globals, k_opt_seen) != Py_True ? "backward"
		: PyDict_GetItem(g_globals, k_batch_rule) == Py_True &&
				PyDict_GetItem(g_globals, k_fetch_rule_off) != Py_True
			? "batch"
			: "optimizer";
	PyObject *rule = PyDict_GetItem(g_globals, k_rule);
	return rule && PyUnicode_Check(rule) && PyUnicode_CompareWithASCIIString(rule, want) == 0;
}

/* *cd: proftop_capture's globals (or NULL), for emit() to use. */
static int emit_fits(TSBase *ts, PyObject **cd)
{
	if (ts->partial == Py_True || !PyLong_Check(ts->pending) || !rule_same())
		return 0;
	if (!is_none(ts->start) && !PyLong_Check(ts->start))
		return 0;
	*cd = ctl_dict();
	return !*cd || is_none(PyDict_GetItem(*cd, k_cap));
}

static void call_py(PyObject *d, PyObject *key, PyObject *arg)
{
	PyObject *fn = PyDict_GetItem(d, key);
	PyObject *x = fn ? PyObject_CallFunctionObjArgs(fn, arg, NULL) : NULL;
	Py_XDECREF(x);
	if (PyErr_Occurred())
		PyErr_Clear();
}

/* _emit_step(ts), emit_fits having said yes (cd: what it found). */
static void emit(TSBase *ts, PyObject *cd)
{
	PyObject *end = ts->pending;
	Py_INCREF(end);
	ts_set(&ts->pending, Py_None);
	ts_set(&ts->soft, Py_None);
	PyObject *start = is_none(ts->start) ? end : ts->start;
	Py_INCREF(start);
	ts_set(&ts->start, end);
	long long fixed = int_of(g_globals, k_batch_fixed);
	long long samples = fixed ? fixed : ts->loader_samples ? ts->loader_samples : ts->fwd_samples;
	long long tokens = ts->loader_tokens ? ts->loader_tokens : ts->fwd_tokens;
	ts->loader_samples = ts->fwd_samples = ts->loader_tokens = ts->fwd_tokens = 0;
	ts->fetches = 0;
	unsigned long long a = PyLong_AsUnsignedLongLongMask(start),
			   b = PyLong_AsUnsignedLongLongMask(end);
	Py_DECREF(start);
	Py_DECREF(end);
	if (step_span)
		step_span(a, b, (unsigned long long)samples);
	if (tokens && step_tokens && !is_none(PyDict_GetItem(g_globals, k_step_tokens)))
		step_tokens((unsigned long long)tokens);
	PyObject *n = PyLong_FromLongLong(int_of(g_globals, k_steps) + 1);
	if (n) {
		PyDict_SetItem(g_globals, k_steps, n);
		Py_DECREF(n);
	}
	if (helper_stats && !is_none(PyDict_GetItem(g_globals, k_helper_stats))) {
		long long calls = int_of(g_globals, k_ncalls) + (long long)g_calls,
			  base = int_of(g_globals, k_calls_base);
		helper_stats(calls > base ? (unsigned long long)(calls - base) : 0,
			     (unsigned long long)int_of(g_globals, k_cost_ps));
	}
	if (cd) {
		/* proftop_capture.boundary has nothing to do while the control
		 * word is the one it saw last and no request waits for its step */
		PyObject *seen = PyDict_GetItem(cd, k_seen);
		int idle = control_word && seen && PyLong_Check(seen) &&
			   is_none(PyDict_GetItem(cd, k_pending)) &&
			   control_word() == PyLong_AsUnsignedLongLongMask(seen);
		if (!idle)
			call_py(g_steps, k_control, (PyObject *)ts);
	}
	if (PyDict_GetItem(g_globals, k_attach) == Py_True) {
		PyObject *fn = PyDict_GetItem(g_globals, k_check_reader);
		PyObject *x = fn ? PyObject_CallObject(fn, NULL) : NULL;
		Py_XDECREF(x);
	}
	if (PyErr_Occurred())
		PyErr_Clear();
}

/* The samples and tokens of a fetched batch (proftop_steps._loader_batch):
 * its first tensor a floating-point one, in an iterator whose batch
 * dimension is known, here; anything else by _loader_batch. */
static void loader_batch(PyObject *it, PyObject *out, long long *n, long long *tok)
{
	*n = *tok = 0;
	PyObject *t = out;
	if ((PyList_Check(out) || PyTuple_Check(out)) && PySequence_Size(out) > 0)
		t = PySequence_GetItem(out, 0);
	else
		Py_INCREF(t);
	PyObject *dim = t && PyObject_IsInstance(t, g_tensor) == 1 ? PyObject_GetAttr(it, k_dim) : NULL;
	PyObject *shape = dim && PyLong_Check(dim) ? PyObject_GetAttr(t, k_shape) : NULL;
	Py_ssize_t len = shape ? PySequence_Size(shape) : -1;
	long d = dim && PyLong_Check(dim) ? PyLong_AsLong(dim) : -1;
	PyObject *fp = len > 0 && d >= 0 ? PyObject_CallMethodObjArgs(t, k_is_fp, NULL) : NULL;
	int done = 0;
	if (fp == Py_True) {
		PyObject *v = PySequence_GetItem(shape, d < len ? d : 0);
		*n = v ? PyLong_AsLongLong(v) : 0;
		Py_XDECREF(v);
		done = !PyErr_Occurred();
	}
	Py_XDECREF(fp);
	Py_XDECREF(shape);
	Py_XDECREF(dim);
	Py_XDECREF(t);
	if (PyErr_Occurred())
		PyErr_Clear();
	if (done)
		return;
	count_py(k_loader_batch, it, out, n, tok);
}

/* _BaseDataLoaderIter.__next__(self) */
PyObject *fetch_call(PyObject *o, PyObject *args, PyObject *kw)
{
	Wrap *w = (Wrap *)o;
	PyObject *it = PyTuple_Size(args) == 1 && !kw ? PyTuple_GetItem(args, 0) : NULL;
	if (!it || !g_steps)
		return PyObject_Call(w->slow, args, kw);
	if (PyDict_GetItem(g_globals, k_dp_on) == Py_True) {
		PyObject *q = PyObject_GetAttr(it, k_tasks);
		int queue = q && q != Py_None;
		Py_XDECREF(q);
		if (!q)
			PyErr_Clear();
		if (queue)
			return PyObject_Call(w->slow, args, kw); /* workers: the queue's counter */
	}
	if (PyDict_GetItem(g_globals, k_off) != Py_False)
		return PyObject_Call(w->orig, args, kw);
	TSBase *ts = cur_ts();
	if (!ts)
		return PyObject_Call(w->slow, args, kw);
	if (ts->in_fetch == Py_True || ts->compiling)
		return PyObject_Call(w->orig, args, kw); /* a loader wrapping a loader */
	PyObject *cd = NULL;
	if (PyDict_GetItem(g_steps, k_feed_on) != Py_False || ts->gen_open == Py_True ||
	    (is_none(ts->pending) && !is_none(ts->soft)) || !ts->held || !PyList_Check(ts->held) ||
	    PyList_Size(ts->held) > 0 || ts->bwd_end == Py_True ||
	    (!is_none(ts->pending) && !emit_fits(ts, &cd)))
		return PyObject_Call(w->slow, args, kw);
	g_taken[2]++;
	Py_INCREF(ts);
	PyDict_SetItem(g_globals, k_activity, Py_True);
	if (!is_none(ts->pending))
		emit(ts, cd);
	if (is_none(ts->start)) {
		PyObject *now = PyLong_FromUnsignedLongLong(clock_now());
		ts_set(&ts->start, now);
		Py_XDECREF(now);
	}
	ts->fetches++;
	phase_push(PHASE_DATALOADER);
	if (PyErr_Occurred())
		PyErr_Clear();
	ts_set(&ts->in_fetch, Py_True);
	PyObject *r = PyObject_Call(w->orig, args, kw);
	ts_set(&ts->in_fetch, Py_False);
	phase_pop();
	if (PyDict_GetItem(g_steps, k_feed_on) != Py_False) {
		PyObject *et, *ev, *etb;
		PyErr_Fetch(&et, &ev, &etb);
		call_py(g_steps, k_feed_arm, (PyObject *)ts);
		PyErr_Restore(et, ev, etb);
	}
	if (r && int_zero(g_globals, k_batch_fixed)) {
		long long n, tok;
		loader_batch(it, r, &n, &tok);
		ts->loader_samples += n;
		ts->loader_tokens += tok;
	}
	Py_DECREF(ts);
	return r;
}

int root_module_call(Wrap *w, TSBase *ts, PyObject *args, PyObject *kw, PyObject **res)
{
	unsigned long loss_id;
	PyObject *names, *mod = PyTuple_GetItem(args, 0);
	if (!g_steps || !mod) {
		PyErr_Clear();
		return 0;
	}
	Py_INCREF(ts);
	int fits = root_fits(ts, mod, &loss_id, &names);
	if (fits) {
		g_taken[0]++;
		*res = root_call(w, ts, args, kw, loss_id, names);
	}
	Py_DECREF(ts);
	return fits;
}

/* root_setup(steps_globals, phases_globals, compiler_globals or None,
 * torch.Tensor): the outermost module call's common case here from now on
 * (compiler_globals: torch.compiler's, whose _is_compiling_flag says that
 * torch.compile or torch.export runs the model). */
PyObject *f_root_setup(PyObject *m, PyObject *args)
{
	PyObject *st, *ph, *comp, *tensor;
	if (!PyArg_ParseTuple(args, "OOOO", &st, &ph, &comp, &tensor))
		return NULL;
	if (!g_globals || !PyDict_Check(st) || !PyDict_Check(ph) ||
	    (comp != Py_None && !PyDict_Check(comp)) || !PyType_Check(tensor)) {
		PyErr_SetString(PyExc_ValueError, "root_setup: after setup(); three dicts and a type");
		return NULL;
	}
	Py_INCREF(st);
	Py_INCREF(ph);
	Py_INCREF(tensor);
	Py_XDECREF(g_steps);
	Py_XDECREF(g_phases);
	Py_XDECREF(g_compiler);
	Py_XDECREF(g_tensor);
	g_steps = st;
	g_phases = ph;
	g_compiler = comp == Py_None ? NULL : comp;
	Py_XINCREF(g_compiler);
	g_tensor = tensor;
	Py_RETURN_NONE;
}

/* taken(): (outermost module calls, optimizer and backward calls, fetches)
 * these paths took, not their Python wrappers: for the tests. */
PyObject *f_taken(PyObject *m, PyObject *noargs)
{
	return Py_BuildValue("(KKK)", g_taken[0], g_taken[1], g_taken[2]);
}

int fast_step_init(void)
{
	static const struct {
		PyObject **k;
		const char *s;
	} keys[] = {
		{&k_train, "_train"},
		{&k_batch_fixed, "_batch_fixed"},
		{&k_activity, "_activity"},
		{&k_labels, "_labels"},
		{&k_loss_base, "_loss_base"},
		{&k_grad_enabled, "_grad_enabled"},
		{&k_feed_on, "_feed_on"},
		{&k_feed_look, "_feed_look"},
		{&k_fwd_batch, "_fwd_batch"},
		{&k_loss_ids, "_loss_ids"},
		{&k_root_exit, "_root_exit"},
		{&k_flag, "_is_compiling_flag"},
		{&k_data, "data"},
		{&k_shape, "shape"},
		{&k_is_fp, "is_floating_point"},
		{&k_opt_seen, "_opt_seen"},
		{&k_method_ids, "_method_ids"},
		{&k_feed_arm, "_feed_arm"},
		{&k_ctl, "_ctl"},
		{&k_rule, "_rule"},
		{&k_steps, "_steps"},
		{&k_ncalls, "_ncalls"},
		{&k_calls_base, "_calls_base"},
		{&k_cost_ps, "_cost_ps"},
		{&k_helper_stats, "_helper_stats"},
		{&k_step_tokens, "_step_tokens"},
		{&k_attach, "_attach"},
		{&k_batch_rule, "_batch_rule"},
		{&k_fetch_rule_off, "_fetch_rule_off"},
		{&k_check_reader, "_check_reader"},
		{&k_control, "_control"},
		{&k_loader_batch, "_loader_batch"},
		{&k_cap, "_cap"},
		{&k_pending, "_pending"},
		{&k_seen, "_seen"},
		{&k_tasks, "_tasks_outstanding"},
		{&k_dim, "_proftop_dim"},
		{&k_dict, "__dict__"},
	};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if (!(*keys[i].k = PyUnicode_InternFromString(keys[i].s)))
			return -1;
	g_key_comp = PyLong_FromLong(-1); /* a label map's compiled region */
	g_key_seq = PyLong_FromLong(-2);  /* a sequence-first model */
	return g_key_comp && g_key_seq ? 0 : -1;
}
