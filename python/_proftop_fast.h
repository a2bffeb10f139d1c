/*
 * _proftop_fast.h - what the two files of the helper's C paths share:
 * _proftop_fast.c (the module, its types, the per-call wrappers) and
 * _proftop_fast_step.c (the paths that follow the step: the outermost
 * module call, optimizer steps and backward, a DataLoader's fetch). Not a
 * public header: the extension is one shared object.
 */
#ifndef PROFTOP_FAST_H
#define PROFTOP_FAST_H

#define Py_LIMITED_API 0x03080000
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <stdint.h>

#ifndef Py_TPFLAGS_METHOD_DESCRIPTOR
#define Py_TPFLAGS_METHOD_DESCRIPTOR (1UL << 17) /* CPython 3.8+: called unbound */
#endif

typedef void (*push_fn)(uint32_t);
typedef void (*pop_fn)(void);
typedef void (*phase_fn)(int);
typedef uint64_t (*now_fn)(void);
typedef void (*span_fn)(uint64_t, uint64_t, uint64_t);
typedef void (*u64_fn)(uint64_t);
typedef void (*u64x2_fn)(uint64_t, uint64_t);

extern push_fn op_push, range_push;
extern pop_fn op_pop, range_pop, phase_pop;
extern phase_fn phase_push;
extern now_fn clock_now, control_word;
/* once a step (proftop_steps._emit_step, proftop_capture.boundary): through
 * ctypes these cost 1-5 us each in a real loop (cold caches), here 0.1 */
extern span_fn step_span;
extern u64_fn step_tokens;
extern u64x2_fn helper_stats;
extern PyObject *g_globals; /* proftop_auto's globals: _off, _dp_on... */
extern PyObject *k_off, *k_dp_on, *k_ts, *k_transforms, *k_name;
extern PyObject *g_functype; /* types.FunctionType: Compose's functions are keyed by name */
extern PyTypeObject *TSBase_T, *Bound_T;
extern unsigned long long g_calls; /* wrapped calls this module handled */

/* ---- the per-thread state */

typedef struct {
	PyObject_HEAD
	int depth;               /* nn.Module calls open on the thread */
	int compiling;           /* torch.compile compiles on the thread */
	PyObject *names;         /* label map of the outermost module, or NULL/None */
	/* the step being built, as proftop_auto._TS documents them (NULL reads as None) */
	PyObject *root, *start, *pending, *bwd_end, *gen_open, *in_bwd, *in_opt, *in_fetch, *soft,
		*held, *partial;
	long long fwd_samples, fwd_tokens, loader_samples, loader_tokens, fetches;
} TSBase;

/* A field set to o (a new reference is taken), the old one released. */
static inline void ts_set(PyObject **field, PyObject *o)
{
	PyObject *old = *field;
	Py_XINCREF(o);
	*field = o;
	Py_XDECREF(old);
}

static inline int is_none(PyObject *o)
{
	return !o || o == Py_None;
}

/* The calling thread's state, borrowed, or NULL (none filed yet). */
static inline TSBase *cur_ts(void)
{
	PyObject *d = PyThreadState_GetDict();
	if (!d)
		return NULL;
	return (TSBase *)PyDict_GetItem(d, k_ts);
}

/* A global of proftop_auto is exactly True (a missing one is not). */
static inline int flag_true(PyObject *key)
{
	return PyDict_GetItem(g_globals, key) == Py_True;
}

/* fn(self, *args, **kw), or fn(*args, **kw) without self (_proftop_fast.c) */
PyObject *call_with(PyObject *fn, PyObject *self, PyObject *args, PyObject *kw);

/* ---- the wrappers: one struct, a call function each */

typedef struct {
	PyObject_HEAD
	PyObject *orig; /* the wrapped function (self first) */
	PyObject *slow; /* the Python wrapper: the rules this one leaves to it */
	PyObject *aux;  /* ModuleCall: _label_miss; Timed, Compose: the ids dict */
	PyObject *aux2; /* Compose: _tf_id */
} Wrap;

/* _proftop_fast_step.c */
int fast_step_init(void); /* its names; -1 with an exception set */
PyObject *step_call(PyObject *o, PyObject *cargs, PyObject *ckw);
PyObject *fetch_call(PyObject *o, PyObject *args, PyObject *kw);
PyObject *f_root_setup(PyObject *m, PyObject *args);
PyObject *f_taken(PyObject *m, PyObject *noargs);
/* the outermost module call: 1 when it was taken (*res its result) */
int root_module_call(Wrap *w, TSBase *ts, PyObject *args, PyObject *kw, PyObject **res);
enum { K_OPT_STEP = 1, K_OPT_EXTRA = 2, K_BACKWARD = 3 };

#endif
