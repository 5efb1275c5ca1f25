/* kiln's runtime C API (libkiln.so): open a session from a config, compile a graph for the
 * configured plugin and device, run it on DLPack tensors.
 *
 * Stability: plain C, versioned like the plugin ABI. Functions are only ever added (a minor
 * version); structs passed in carry their struct_size first, so a struct may grow at its end
 * without breaking callers built against an older header.
 *
 * Errors are values: every fallible call returns NULL on success or a kiln_runtime_error the
 * caller destroys. Its code says whose fault it is: KILN_RUNTIME_USER_ERROR for bad input (a
 * config, a graph, a tensor of the wrong shape, a device no plugin serves), INTERNAL for a bug.
 *
 * Tensors: inputs and outputs are DLTensor (DLPack). A tensor already on the graph's device
 * (kDLCPU for a cpu plugin; kDLCUDA with the same device ordinal for ptx, on the device's
 * primary context and its default stream) in the layout the program uses (element-aligned
 * on a CPU, 64-byte aligned on a GPU) is read or written in place, with no copy; any other is
 * copied through the host, and so is an output whose memory overlaps an input's. Outputs the
 * runtime allocates come back as DLManagedTensorVersioned in host memory, freed by their deleter.
 *
 * Threads: every function may be called from any thread. A session compiles one graph at a
 * time; a compiled graph may be run from several threads at once, and such runs take turns
 * on its buffers (its arena is reused across calls). A graph must not be destroyed while
 * it runs. Compiled graphs keep what they need of their session: closing the session first
 * is allowed. */
#ifndef KILN_RUNTIME_H
#define KILN_RUNTIME_H

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_RUNTIME_API_MAJOR 1u
/* 1.1: kiln_graph_set_random_seed; 1.2: deterministic; 1.3: kiln_graph_import_memory;
 * 1.4: conv_tf32 and matmul_tf32 */
#define KILN_RUNTIME_API_MINOR 4u

#if defined(_WIN32)
#define KILN_RUNTIME_EXPORT __declspec(dllexport)
#else
#define KILN_RUNTIME_EXPORT __attribute__((visibility("default")))
#endif

/* DLPack 1.0's versioned managed tensor, for headers older than 1.0 (Debian bookworm ships
 * 0.6): the same layout, under kiln's name. */
#if defined(DLPACK_MAJOR_VERSION) && DLPACK_MAJOR_VERSION >= 1
typedef DLManagedTensorVersioned kiln_dl_managed_tensor;
#else
typedef struct kiln_dl_managed_tensor {
  struct {
    uint32_t major;
    uint32_t minor;
  } version;
  void* manager_ctx;
  void (*deleter)(struct kiln_dl_managed_tensor* self);
  uint64_t flags;
  DLTensor dl_tensor;
} kiln_dl_managed_tensor;
#endif
/* DLPack's code for bool (kDLBool), absent from headers before 0.8. */
#define KILN_DL_BOOL 6u

typedef struct kiln_session kiln_session;
typedef struct kiln_graph kiln_graph;
typedef struct kiln_runtime_error kiln_runtime_error;

typedef enum kiln_runtime_code {
  KILN_RUNTIME_USER_ERROR = 1,    /* bad input: config, graph, weights, tensors */
  KILN_RUNTIME_INTERNAL_ERROR = 2 /* a bug in kiln or a plugin */
} kiln_runtime_code;

/* The library's API version (compare with the header's KILN_RUNTIME_API_MAJOR). */
KILN_RUNTIME_EXPORT void kiln_runtime_version(uint32_t* major, uint32_t* minor);

KILN_RUNTIME_EXPORT kiln_runtime_code kiln_runtime_error_code(const kiln_runtime_error* error);
/* Valid until the error is destroyed. */
KILN_RUNTIME_EXPORT const char* kiln_runtime_error_message(const kiln_runtime_error* error);
KILN_RUNTIME_EXPORT void kiln_runtime_error_destroy(kiln_runtime_error* error);

/* ---- sessions ---------------------------------------------------------------------- */

typedef struct kiln_session_options {
  size_t struct_size;
  /* YAML text of a config (relative paths resolve against the working directory); NULL to
   * read config_path instead. */
  const char* config_text;
  /* A config file; NULL for $KILN_CONFIG, else the built-in default config. */
  const char* config_path;
  /* Since 1.2 (read only when struct_size covers it): nonzero compiles every graph with
   * schedule.deterministic and autotune.deterministic on, whatever the config says (what
   * torch.use_deterministic_algorithms(True) asks of the PyTorch bridge). */
  int32_t deterministic;
  /* Since 1.4: whether f32 convolutions (conv_tf32) and matmuls (matmul_tf32) may multiply on
   * TF32 tensor cores where a plugin's library offers it (schedule.conv_tf32, .matmul_tf32):
   * 0 keeps the config's choice, 1 allows, -1 forbids (what torch.backends.cudnn.allow_tf32
   * and torch.backends.cuda.matmul.allow_tf32 say, for the PyTorch bridge). */
  int32_t conv_tf32;
  int32_t matmul_tf32;
} kiln_session_options;

/* Loads the configured plugins once, for every graph the session compiles. options may be
 * NULL (the default config). */
KILN_RUNTIME_EXPORT kiln_runtime_error* kiln_session_open(const kiln_session_options* options,
                                                          kiln_session** out);
KILN_RUNTIME_EXPORT void kiln_session_close(kiln_session* session);

/* ---- graphs ------------------------------------------------------------------------ */

typedef struct kiln_graph_source {
  size_t struct_size;
  /* The graph (kiln.graph/1 JSON): its text, or a file when graph_text is NULL. */
  const char* graph_text;
  size_t graph_text_size;
  const char* graph_path;
  /* The parameters (safetensors): bytes, or a file when weights is NULL; neither for a
   * graph without parameters. */
  const void* weights;
  size_t weights_size;
  const char* weights_path;
} kiln_graph_source;

KILN_RUNTIME_EXPORT kiln_runtime_error* kiln_graph_compile(kiln_session* session,
                                                           const kiln_graph_source* source,
                                                           kiln_graph** out);
KILN_RUNTIME_EXPORT void kiln_graph_destroy(kiln_graph* graph);

/* Where the graph runs: the DLPack device its tensors are read from in place, and the
 * "plugin:device" text ("cpp_openmp:0"). */
KILN_RUNTIME_EXPORT DLDevice kiln_graph_device(const kiln_graph* graph);
KILN_RUNTIME_EXPORT const char* kiln_graph_target(const kiln_graph* graph);

/* 1 when the whole compiled graph came from the disk cache (no scheduling, no compiler run),
 * else 0. */
KILN_RUNTIME_EXPORT int kiln_graph_from_cache(const kiln_graph* graph);

/* What compiling made, as JSON text valid while the graph lives: {"kernels": N,
 * "library_calls": N, "host_steps": N, "host_ops": ["node (op)", ...], "from_cache": bool,
 * "compile_ms": x}. host_ops are nodes the reference interpreter runs on the host. */
KILN_RUNTIME_EXPORT const char* kiln_graph_stats_json(const kiln_graph* graph);

KILN_RUNTIME_EXPORT size_t kiln_graph_num_inputs(const kiln_graph* graph);
KILN_RUNTIME_EXPORT size_t kiln_graph_num_outputs(const kiln_graph* graph);

typedef struct kiln_tensor_info {
  size_t struct_size;
  const char* name; /* valid while the graph lives */
  DLDataType dtype; /* lanes 1 */
  int32_t ndim;
  const int64_t* shape; /* valid while the graph lives */
} kiln_tensor_info;

/* Input or output `index` (is_output 0 or 1) as the graph declares it. */
KILN_RUNTIME_EXPORT kiln_runtime_error* kiln_graph_tensor_info(const kiln_graph* graph,
                                                               int is_output, size_t index,
                                                               kiln_tensor_info* out);

/* Runs the graph: inputs and outputs in graph order, each of the declared dtype and shape,
 * any strides (NULL strides: compact row-major), on the host or the graph's device. Output
 * tensors are written, never reallocated. */
KILN_RUNTIME_EXPORT kiln_runtime_error* kiln_graph_run(kiln_graph* graph,
                                                       const DLTensor* const* inputs,
                                                       size_t num_inputs,
                                                       const DLTensor* const* outputs,
                                                       size_t num_outputs);

/* Bytes the graph's last run copied to stage tensors it could not read or write in place
 * (another device, another layout): 0 when every tensor was used where it lay. */
KILN_RUNTIME_EXPORT uint64_t kiln_graph_last_run_copied_bytes(const kiln_graph* graph);

/* The same with outputs the runtime allocates in host memory (compact row-major): outputs[i]
 * is set for each of the graph's num_outputs outputs; the caller calls each one's deleter. */
KILN_RUNTIME_EXPORT kiln_runtime_error* kiln_graph_run_alloc(kiln_graph* graph,
                                                             const DLTensor* const* inputs,
                                                             size_t num_inputs,
                                                             kiln_dl_managed_tensor** outputs,
                                                             size_t num_outputs);

/* Since 1.1. Random ops (rand, randn, randperm, native_dropout) draw from `seed` from now on:
 * the k-th run after this call draws with (seed, k), so the same seed repeats the same
 * sequence of runs, on any plugin. A compiled graph starts with seed 0. */
KILN_RUNTIME_EXPORT void kiln_graph_set_random_seed(kiln_graph* graph, uint64_t seed);

/* Since 1.3. Memory another process shares, named by a handle that process made. */
typedef enum kiln_shared_memory_type {
  /* A file descriptor of host memory (memfd_create, shm_open, a file): for CPU devices. The
   * caller keeps the descriptor (it may close it once imported). */
  KILN_SHARED_MEMORY_POSIX_FD = 1,
  /* A CUDA IPC handle (cuIpcGetMemHandle / cudaIpcGetMemHandle, 64 bytes) of memory on the
   * graph's GPU. */
  KILN_SHARED_MEMORY_CUDA_IPC = 2
} kiln_shared_memory_type;

typedef struct kiln_shared_memory {
  size_t struct_size;
  uint32_t type;      /* kiln_shared_memory_type */
  int32_t fd;         /* KILN_SHARED_MEMORY_POSIX_FD */
  const void* handle; /* KILN_SHARED_MEMORY_CUDA_IPC: the handle's bytes */
  size_t handle_size;
  uint64_t offset; /* bytes from the start of the shared memory to the part imported */
  uint64_t bytes;  /* the part's size */
} kiln_shared_memory;

/* Since 1.3. Imports `bytes` of shared memory onto the graph's device: *data is where
 * `offset` lies, usable as DLTensor.data (with kiln_graph_device) in kiln_graph_run until
 * kiln_graph_release_memory — the graph then reads and writes it in place. The exporter keeps
 * the memory alive until then. An error says why when the graph's plugin imports no such
 * handle. */
KILN_RUNTIME_EXPORT kiln_runtime_error* kiln_graph_import_memory(kiln_graph* graph,
                                                                 const kiln_shared_memory* shared,
                                                                 void** data);
KILN_RUNTIME_EXPORT kiln_runtime_error* kiln_graph_release_memory(kiln_graph* graph, void* data);

#ifdef __cplusplus
}
#endif

#endif /* KILN_RUNTIME_H */
