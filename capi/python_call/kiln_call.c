/* _kiln_call: the per-call path of a compiled graph for the Python bridge, in C.
 *
 * Calling kiln_graph_run through ctypes costs about 3 µs of Python per call on top of the
 * runtime's own (argument structs, attribute lookups, ctypes' conversions), as much as a small
 * kernel. This module reads each torch tensor's dtype, device, shape, strides and data pointer
 * through CPython's limited API (one build for every CPython >= 3.11), builds the DLTensors on
 * the stack and calls kiln_graph_run with the GIL released, as ctypes did.
 *
 * Anything off the common path (an argument that is not a tensor, a dtype or device kiln does
 * not take, more dimensions than DLTensor arrays here hold) goes to the `fallback` callable,
 * the bridge's Python path, which converts or explains it: both paths agree by construction.
 * The module knows nothing of torch or of libkiln's location: the bridge hands it the
 * function's address, the dtype table and the output makers. */
#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlpack/dlpack.h>
#include <stdint.h>
#include <string.h>
#include <structmember.h>

/* kiln_graph_run (sdk/include/kiln/runtime.h); the graph and error are opaque here. */
typedef void* (*graph_run_fn)(void* graph, const DLTensor* const* inputs, size_t num_inputs,
                              const DLTensor* const* outputs, size_t num_outputs);

enum { max_dims = 16, stack_tensors = 8 };

/* What one call's argument needs besides the DLTensor: its shape and strides. */
typedef struct {
  int64_t shape[max_dims];
  int64_t strides[max_dims];
} dims;

typedef struct {
  PyObject_HEAD graph_run_fn run;
  void* graph;
  PyObject* dtypes;      /* dict: torch dtype -> (DLDataType code, bits) */
  PyObject* makers;      /* tuple of (callable, args, kwargs or None): a fresh output each */
  PyObject* raise_error; /* callable(error address): raises the KilnError, frees the error */
  PyObject* fallback;    /* callable(tensors, out) -> list: the Python path */
  PyObject* stream;      /* None, or callable() -> the current CUDA stream's handle */
  PyObject* sync;        /* callable(): waits for the current stream (when stream is set) */
  PyObject* attributes;  /* the instance __dict__ (the bridge marks callers boxed there) */
} caller;

/* Every reference a caller holds, in one place for __init__ (the first six), traverse and
 * clear. */
enum { held_count = 7, held_by_init = 6 };
static void held(caller* self, PyObject** slots[held_count]) {
  PyObject** all[held_count] = {&self->dtypes, &self->makers, &self->raise_error, &self->fallback,
                                &self->stream, &self->sync,   &self->attributes};
  memcpy(slots, all, sizeof all);
}

/* Interned attribute names, made once per module. */
typedef struct {
  PyObject *dtype, *shape, *stride, *data_ptr, *is_cpu, *is_cuda, *get_device;
} names;

/* The names' text and where each is kept, for the module's exec and free. */
enum { name_count = 7 };
static void name_slots(names* n, const char* text[name_count], PyObject** slots[name_count]) {
  const char* all_text[name_count] = {"dtype",  "shape",   "stride",    "data_ptr",
                                      "is_cpu", "is_cuda", "get_device"};
  PyObject** all[name_count] = {&n->dtype,  &n->shape,   &n->stride,    &n->data_ptr,
                                &n->is_cpu, &n->is_cuda, &n->get_device};
  memcpy(text, all_text, sizeof all_text);
  memcpy(slots, all, sizeof all);
}

static names* module_names(PyObject* type_or_module);

/* 1: filled; 0: not a case for this path (use the fallback); -1: a Python error is set. */
static int fill_tensor(caller* self, const names* n, PyObject* t, DLTensor* d, dims* room) {
  int result = 0;
  PyObject *dtype = NULL, *code_bits = NULL, *shape = NULL, *strides = NULL, *ptr = NULL;
  PyObject* flag = NULL;
  dtype = PyObject_GetAttr(t, n->dtype);
  if (!dtype) goto not_a_tensor;
  code_bits = PyDict_GetItemWithError(self->dtypes, dtype); /* borrowed */
  if (!code_bits) {
    result = PyErr_Occurred() ? -1 : 0;
    goto done;
  }
  Py_INCREF(code_bits);
  d->dtype.code = (uint8_t)PyLong_AsLong(PyTuple_GetItem(code_bits, 0));
  d->dtype.bits = (uint8_t)PyLong_AsLong(PyTuple_GetItem(code_bits, 1));
  d->dtype.lanes = 1;

  flag = PyObject_GetAttr(t, n->is_cpu);
  if (!flag) goto not_a_tensor;
  if (flag == Py_True) {
    d->device.device_type = kDLCPU;
    d->device.device_id = 0;
  } else {
    Py_DECREF(flag);
    flag = PyObject_GetAttr(t, n->is_cuda);
    if (!flag) goto not_a_tensor;
    if (flag != Py_True) goto done; /* another device: the fallback names it */
    PyObject* index = PyObject_CallMethodObjArgs(t, n->get_device, NULL);
    if (!index) goto not_a_tensor;
    d->device.device_type = kDLCUDA;
    d->device.device_id = (int32_t)PyLong_AsLong(index);
    Py_DECREF(index);
  }

  shape = PyObject_GetAttr(t, n->shape);
  if (!shape || !PyTuple_Check(shape)) goto not_a_tensor;
  strides = PyObject_CallMethodObjArgs(t, n->stride, NULL);
  if (!strides || !PyTuple_Check(strides)) goto not_a_tensor;
  const Py_ssize_t ndim = PyTuple_Size(shape);
  if (ndim > max_dims || PyTuple_Size(strides) != ndim) goto done;
  int64_t elements = 1;
  for (Py_ssize_t i = 0; i < ndim; ++i) {
    room->shape[i] = PyLong_AsLongLong(PyTuple_GetItem(shape, i));
    room->strides[i] = PyLong_AsLongLong(PyTuple_GetItem(strides, i));
    elements *= room->shape[i];
  }
  if (PyErr_Occurred()) goto not_a_tensor;
  d->ndim = (int32_t)ndim;
  /* A 0-d tensor still points at one extent, as the Python path's arrays of length 1 do. */
  if (ndim == 0) room->shape[0] = room->strides[0] = 1;
  d->shape = room->shape;
  d->strides = room->strides;
  d->byte_offset = 0;
  d->data = NULL;
  if (elements != 0) {
    ptr = PyObject_CallMethodObjArgs(t, n->data_ptr, NULL);
    if (!ptr) goto not_a_tensor;
    d->data = PyLong_AsVoidPtr(ptr);
    if (PyErr_Occurred()) goto not_a_tensor;
  }
  result = 1;
  goto done;
not_a_tensor:
  /* Something without a tensor's attributes: the fallback converts it (or says why not).
   * Other errors (an interrupt, no memory) propagate. */
  if (PyErr_ExceptionMatches(PyExc_AttributeError) || PyErr_ExceptionMatches(PyExc_TypeError) ||
      PyErr_ExceptionMatches(PyExc_ValueError) || PyErr_ExceptionMatches(PyExc_OverflowError)) {
    PyErr_Clear();
    result = 0;
  } else {
    result = -1;
  }
done:
  Py_XDECREF(dtype);
  Py_XDECREF(code_bits);
  Py_XDECREF(flag);
  Py_XDECREF(shape);
  Py_XDECREF(strides);
  Py_XDECREF(ptr);
  return result;
}

/* Fresh outputs from the makers: a new list, or NULL with an error set. */
static PyObject* make_outputs(caller* self) {
  const Py_ssize_t count = PyTuple_Size(self->makers);
  PyObject* list = PyList_New(count);
  if (!list) return NULL;
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject* maker = PyTuple_GetItem(self->makers, i);
    PyObject* kwargs = PyTuple_GetItem(maker, 2);
    PyObject* tensor = PyObject_Call(PyTuple_GetItem(maker, 0), PyTuple_GetItem(maker, 1),
                                     kwargs == Py_None ? NULL : kwargs);
    if (!tensor) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SetItem(list, i, tensor); /* steals */
  }
  return list;
}

/* Waits for work queued on a CUDA stream other than the legacy default one: kiln launches
 * on the default stream, and must not read what is not written yet. 0, or -1 on an error. */
static int wait_for_current_stream(caller* self) {
  if (self->stream == Py_None) return 0;
  PyObject* handle = PyObject_CallNoArgs(self->stream);
  if (!handle) return -1;
  const int other = PyObject_IsTrue(handle);
  Py_DECREF(handle);
  if (other <= 0) return other;
  PyObject* done = PyObject_CallNoArgs(self->sync);
  if (!done) return -1;
  Py_DECREF(done);
  return 0;
}

/* Sets the KilnError a run returned (raise_error frees the error). */
static void raise_run_error(caller* self, void* error) {
  PyObject* address = PyLong_FromVoidPtr(error);
  if (!address) return;
  PyObject* raised = PyObject_CallFunctionObjArgs(self->raise_error, address, NULL);
  Py_DECREF(address);
  Py_XDECREF(raised);
  if (!PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "kiln: a run failed, raising nothing");
}

/* Runs the graph on `tensors` into `out` (a list): `out` itself (a new reference) when it ran,
 * the fallback's result when an argument is not for this path, NULL with an error set. */
static PyObject* run_graph(caller* self, const names* n, PyObject* tensors, PyObject* out,
                           PyObject* out_given) {
  const Py_ssize_t num_in = PyTuple_Size(tensors), num_out = PyList_Size(out);
  const Py_ssize_t count = num_in + num_out;
  DLTensor stack_structs[stack_tensors];
  const DLTensor* stack_pointers[stack_tensors];
  dims stack_dims[stack_tensors];
  DLTensor* structs = stack_structs;
  const DLTensor** pointers = stack_pointers;
  dims* room = stack_dims;
  void* heap = NULL;
  if (count > stack_tensors) {
    heap = PyMem_Malloc((size_t)count * (sizeof(DLTensor) + sizeof(DLTensor*) + sizeof(dims)));
    if (!heap) return PyErr_NoMemory();
    room = (dims*)heap;
    structs = (DLTensor*)(room + count);
    pointers = (const DLTensor**)(structs + count);
  }
  int usable = 1;
  for (Py_ssize_t i = 0; i < count && usable == 1; ++i) {
    PyObject* t = i < num_in ? PyTuple_GetItem(tensors, i) : PyList_GetItem(out, i - num_in);
    usable = fill_tensor(self, n, t, &structs[i], &room[i]);
    pointers[i] = &structs[i];
  }
  PyObject* result = NULL;
  if (usable == 1) {
    PyThreadState* state = PyEval_SaveThread(); /* kernels may run long: let others run */
    void* error =
        self->run(self->graph, pointers, (size_t)num_in, pointers + num_in, (size_t)num_out);
    PyEval_RestoreThread(state);
    if (error) {
      raise_run_error(self, error);
    } else {
      Py_INCREF(out);
      result = out;
    }
  } else if (usable == 0) {
    result = PyObject_CallFunctionObjArgs(self->fallback, tensors, out_given, NULL);
  }
  PyMem_Free(heap);
  return result;
}

/* caller(tensors, out=None) -> list of outputs: runs the graph. */
static PyObject* caller_call(PyObject* op, PyObject* args, PyObject* kwargs) {
  caller* self = (caller*)op;
  static char* keywords[] = {"tensors", "out", NULL};
  PyObject *tensors_in, *out_given = Py_None;
  const Py_ssize_t given = PyTuple_Size(args);
  if (!kwargs && (given == 1 || given == 2)) { /* the bridge's calls: no keyword parsing */
    tensors_in = PyTuple_GetItem(args, 0);
    if (given == 2) out_given = PyTuple_GetItem(args, 1);
  } else if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O", keywords, &tensors_in, &out_given)) {
    return NULL;
  }
  const names* n = module_names((PyObject*)Py_TYPE(op));
  if (!n) return NULL;
  if (!self->graph) /* closed: the fallback says so */
    return PyObject_CallFunctionObjArgs(self->fallback, tensors_in, out_given, NULL);
  PyObject* tensors = PySequence_Tuple(tensors_in);
  if (!tensors) return NULL;
  PyObject* result = NULL;
  PyObject* out = out_given == Py_None ? make_outputs(self) : PySequence_List(out_given);
  if (out && wait_for_current_stream(self) == 0)
    result = run_graph(self, n, tensors, out, out_given);
  Py_XDECREF(out);
  Py_DECREF(tensors);
  return result;
}

static int caller_init(PyObject* op, PyObject* args, PyObject* kwargs) {
  caller* self = (caller*)op;
  static char* keywords[] = {"run",      "graph",  "dtypes", "makers", "raise_error",
                             "fallback", "stream", "sync",   NULL};
  PyObject *run, *graph, *dtypes, *makers, *raise_error, *fallback, *stream = Py_None,
                                                                    *sync = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO!O!OO|OO", keywords, &run, &graph,
                                   &PyDict_Type, &dtypes, &PyTuple_Type, &makers, &raise_error,
                                   &fallback, &stream, &sync))
    return -1;
  void* const run_at = PyLong_AsVoidPtr(run);
  void* const graph_at = PyLong_AsVoidPtr(graph);
  if (PyErr_Occurred()) return -1;
  if (!run_at || !graph_at) {
    PyErr_SetString(PyExc_ValueError, "run and graph must be non-zero addresses");
    return -1;
  }
  for (Py_ssize_t i = 0; i < PyTuple_Size(makers); ++i) {
    PyObject* maker = PyTuple_GetItem(makers, i);
    if (!PyTuple_Check(maker) || PyTuple_Size(maker) != 3 ||
        !PyTuple_Check(PyTuple_GetItem(maker, 1))) {
      PyErr_SetString(PyExc_TypeError, "each maker is (callable, args tuple, kwargs or None)");
      return -1;
    }
  }
  if (stream != Py_None && sync == Py_None) {
    PyErr_SetString(PyExc_TypeError, "a stream callable needs a sync callable");
    return -1;
  }
  /* Everything checked: nothing changes on a failed call. */
  self->run = (graph_run_fn)run_at;
  self->graph = graph_at;
  PyObject* given[held_by_init] = {dtypes, makers, raise_error, fallback, stream, sync};
  PyObject** slots[held_count];
  held(self, slots);
  for (size_t i = 0; i < held_by_init; ++i) {
    PyObject* old = *slots[i];
    Py_INCREF(given[i]);
    *slots[i] = given[i];
    Py_XDECREF(old);
  }
  return 0;
}

static int caller_traverse(PyObject* op, visitproc visit, void* arg) {
  PyObject** slots[held_count];
  held((caller*)op, slots);
  for (size_t i = 0; i < held_count; ++i) Py_VISIT(*slots[i]);
  Py_VISIT(Py_TYPE(op));
  return 0;
}

static int caller_clear(PyObject* op) {
  PyObject** slots[held_count];
  held((caller*)op, slots);
  for (size_t i = 0; i < held_count; ++i) Py_CLEAR(*slots[i]);
  return 0;
}

static void caller_dealloc(PyObject* op) {
  PyTypeObject* type = Py_TYPE(op);
  PyObject_GC_UnTrack(op);
  caller_clear(op);
  freefunc free_fn = (freefunc)PyType_GetSlot(type, Py_tp_free);
  free_fn(op);
  Py_DECREF(type);
}

/* caller.forget(): the graph was destroyed; later calls go to the fallback, which says so. */
static PyObject* caller_forget(PyObject* op, PyObject* unused) {
  (void)unused;
  ((caller*)op)->graph = NULL;
  Py_RETURN_NONE;
}

static PyMethodDef caller_methods[] = {
    {"forget", caller_forget, METH_NOARGS, "Forgets the graph (destroyed): calls fall back."},
    {NULL, NULL, 0, NULL},
};

/* An instance __dict__: attributes set on a caller survive functools.wraps (torch._dynamo's
 * wrappers copy a function's __dict__, not its type's attributes). */
static PyMemberDef caller_members[] = {
    {"__dictoffset__", T_PYSSIZET, offsetof(caller, attributes), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef caller_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot caller_slots[] = {
    {Py_tp_doc,
     "Caller(run, graph, dtypes, makers, raise_error, fallback, stream=None, "
     "sync=None): caller(tensors, out=None) runs a compiled graph."},
    {Py_tp_init, caller_init},
    {Py_tp_call, caller_call},
    {Py_tp_methods, caller_methods},
    {Py_tp_members, caller_members},
    {Py_tp_getset, caller_getset},
    {Py_tp_traverse, caller_traverse},
    {Py_tp_clear, caller_clear},
    {Py_tp_dealloc, caller_dealloc},
    {0, NULL},
};

static PyType_Spec caller_spec = {"_kiln_call.Caller", sizeof(caller), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, caller_slots};

static int module_exec(PyObject* module) {
  const char* text[name_count];
  PyObject** slot[name_count];
  name_slots((names*)PyModule_GetState(module), text, slot);
  for (size_t i = 0; i < name_count; ++i) {
    *slot[i] = PyUnicode_InternFromString(text[i]);
    if (!*slot[i]) return -1;
  }
  PyObject* type = PyType_FromModuleAndSpec(module, &caller_spec, NULL);
  if (!type) return -1;
  const int added = PyModule_AddObjectRef(module, "Caller", type);
  Py_DECREF(type);
  return added;
}

static int module_traverse(PyObject* module, visitproc visit, void* arg) {
  (void)visit;
  (void)arg;
  (void)module;
  return 0; /* the names are strings: no cycles */
}

static void module_free(void* op) {
  names* n = (names*)PyModule_GetState((PyObject*)op);
  if (!n) return;
  const char* text[name_count];
  PyObject** slot[name_count];
  name_slots(n, text, slot);
  for (size_t i = 0; i < name_count; ++i) Py_CLEAR(*slot[i]);
}

static PyModuleDef_Slot module_slots[] = {{Py_mod_exec, module_exec}, {0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_kiln_call", "kiln's per-call path for the Python bridge, in C.",
    sizeof(names),         NULL,         module_slots,
    module_traverse,       NULL,         module_free};

static names* module_names(PyObject* type) {
  PyObject* module = PyType_GetModule((PyTypeObject*)type);
  return module ? (names*)PyModule_GetState(module) : NULL;
}

PyMODINIT_FUNC PyInit__kiln_call(void) {
  return PyModuleDef_Init(&module_def);
}
