/*
 * kiln plugin ABI, version 1.
 *
 * A backend plugin is a shared object that exports exactly one symbol,
 * kiln_plugin_get_api(). It returns a table of function pointers; the host calls
 * nothing else. The rules every plugin and host follow:
 *
 *  - Versioning. KILN_ABI_MAJOR must match between host and plugin. Minors are
 *    negotiated down: the host passes its minor to kiln_plugin_get_api() and again in
 *    kiln_plugin_create_args.abi_minor (the negotiated value, min(host, plugin)); the
 *    plugin behaves as that minor.
 *  - Struct sizes. Every struct begins with `size_t struct_size`. Tables and structs only
 *    grow at the end. A reader uses min(its sizeof, struct_size) bytes and treats the
 *    rest as zero / NULL. A writer writes at most the struct_size the reader gave.
 *    An array of structs (options, properties) is strided by its first element's
 *    struct_size, so both sides can walk it whatever their own sizeof.
 *  - NULL means "not supported". The host checks every function pointer before a call.
 *    The functions marked REQUIRED must be present or the plugin is rejected.
 *  - Errors. A function that can fail returns kiln_error*: NULL on success, else an
 *    object the plugin allocated. The host reads it with error_code/error_message and
 *    frees it with error_destroy. No C++ type, exception or allocator crosses this
 *    boundary.
 *  - Ownership. Variable-size results come back as kiln_blob objects that the host frees
 *    with blob_destroy. Strings inside structs the plugin fills (attributes, device
 *    properties) stay valid until plugin_destroy.
 *  - Threads. Unless attributes.thread_safety says otherwise, the host calls a plugin
 *    instance from one thread at a time.
 *  - Devices are numbered 0..device_count-1 within a plugin instance. Device memory is
 *    named by a 64-bit address (a host pointer for a CPU, a device pointer for a GPU).
 *
 * Minor versions: 1.1 appended mem_register and mem_unregister to the table; 1.2 appended
 * device_capabilities, stream_wait_event, event_query, host_alloc and host_free, and the
 * stream and copy rules below; 1.3 appended mem_import and mem_release_import (memory
 * another process shares) and the capability flags naming the handles a device imports; 1.4
 * appended stream_begin_capture, stream_end_capture, graph_launch and graph_destroy (work
 * recorded once and replayed as one launch) and the capture rule below.
 *
 *  - Streams (1.2). Launches, extern calls, copies and event records given the same stream
 *    run in the order they were issued; a NULL stream is the device's default stream. A device
 *    claiming KILN_CAPABILITY_STREAMS may run work of different streams concurrently: the host
 *    orders it with events (event_record, then stream_wait_event). Without the flag a plugin
 *    may run everything in one order, which honours every stream's order.
 *  - Copies and host memory lifetime. A copy given a NULL stream, or made for a host of minor
 *    0 or 1, is done with the host memory when it returns: a host-to-device source may be
 *    reused at once and a device-to-host destination holds the bytes. A copy given a stream by
 *    a host of minor 2 or later, on a device claiming KILN_CAPABILITY_ASYNC_COPY, may return
 *    before it is done: the host leaves the host memory untouched (source) or unread
 *    (destination) until it has synchronized that stream, or an event recorded on it after
 *    the copy has completed. Device memory named by a pending copy follows stream order.
 *  - Capture (1.4). Between stream_begin_capture and stream_end_capture, launches, extern
 *    calls and device-to-device copies given the capturing stream are recorded, not run; they
 *    return as soon as they are recorded and check their arguments as they would otherwise.
 *    A call the plugin cannot record returns UNSUPPORTED and leaves the capture open. While a
 *    stream captures, the host gives the device no other work and does not wait for it.
 *    graph_launch queues the recorded work on a stream as if it were issued again, in the
 *    recorded order, on the same addresses and arguments: memory it names must stay allocated
 *    until the last replay has finished. A kernel's error in a replay is reported as a
 *    launch's is; a recorded launch reports no earlier run's error.
 */
#ifndef KILN_PLUGIN_H
#define KILN_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_ABI_MAJOR 1
#define KILN_ABI_MINOR 4

#if defined(_WIN32)
#define KILN_PLUGIN_EXPORT __declspec(dllexport)
#else
#define KILN_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* ---- status codes and errors ------------------------------------------------------ */

typedef enum kiln_status {
  KILN_OK = 0,
  KILN_STATUS_UNIMPLEMENTED = 1,    /* present in the table but not done yet */
  KILN_STATUS_INVALID_ARGUMENT = 2, /* the caller passed something wrong */
  KILN_STATUS_UNSUPPORTED = 3,      /* valid request this plugin/device cannot serve */
  KILN_STATUS_OUT_OF_MEMORY = 4,
  KILN_STATUS_DEVICE_ERROR = 5, /* the device or its driver failed */
  KILN_STATUS_COMPILE_ERROR = 6,
  KILN_STATUS_NOT_FOUND = 7,
  KILN_STATUS_INTERNAL = 8 /* a bug in the plugin */
} kiln_status;

typedef struct kiln_error kiln_error;           /* plugin-owned */
typedef struct kiln_blob kiln_blob;             /* plugin-owned bytes */
typedef struct kiln_plugin kiln_plugin;         /* one instance of a plugin */
typedef struct kiln_executable kiln_executable; /* a loaded artifact */
typedef struct kiln_stream kiln_stream;
typedef struct kiln_event kiln_event;
typedef struct kiln_graph kiln_graph; /* work a stream captured, for replay (1.4) */

/* ---- values the host passes in ---------------------------------------------------- */

/* One plugin option from the config. A scalar has one value; a list has any number. */
typedef struct kiln_option {
  size_t struct_size;
  const char* key;
  const char* const* values;
  size_t num_values;
  int is_list;
} kiln_option;

typedef enum kiln_log_level {
  KILN_LOG_TRACE = 0,
  KILN_LOG_DEBUG = 1,
  KILN_LOG_INFO = 2,
  KILN_LOG_WARN = 3,
  KILN_LOG_ERROR = 4
} kiln_log_level;

/* The plugin logs through the host so its messages land in the host's log. */
typedef void (*kiln_log_fn)(void* user_data, kiln_log_level level, const char* message);

typedef struct kiln_plugin_create_args {
  size_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor; /* negotiated: min(host minor, plugin minor) */
  const kiln_option* options;
  size_t num_options;
  kiln_log_fn log; /* may be NULL */
  void* log_user_data;
} kiln_plugin_create_args;

/* ---- values the plugin fills ------------------------------------------------------ */

enum kiln_thread_safety_flags {
  KILN_THREAD_SAFE_COMPILE = 1u << 0, /* compile() may run concurrently */
  KILN_THREAD_SAFE_LAUNCH = 1u << 1,  /* launch() and memory calls may run concurrently */
  /* compile() costs little per call: the core may compile each kernel of a graph on its
   * own (concurrently, with KILN_THREAD_SAFE_COMPILE) and cache it on its own. Without it the
   * core sends a graph's kernels in one call per tuning config (a C++ compiler's start-up
   * would dominate one call per kernel). */
  KILN_COMPILE_PER_KERNEL = 1u << 2
};

/* What a device does beyond ABI 1.0's rules (1.2, device_capabilities). The host uses a
 * feature only where its flag is set and its functions are in the table. */
enum kiln_capability_flags {
  KILN_CAPABILITY_STREAMS = 1u << 0,     /* work of different streams may run concurrently */
  KILN_CAPABILITY_ASYNC_COPY = 1u << 1,  /* copies given a stream may return before they finish */
  KILN_CAPABILITY_PINNED_HOST = 1u << 2, /* host_alloc memory is copied without staging */
  KILN_CAPABILITY_IMPORT_POSIX_FD = 1u << 3, /* mem_import takes KILN_MEM_HANDLE_POSIX_FD (1.3) */
  KILN_CAPABILITY_IMPORT_CUDA_IPC = 1u << 4, /* mem_import takes KILN_MEM_HANDLE_CUDA_IPC (1.3) */
  KILN_CAPABILITY_CAPTURE = 1u << 5          /* streams capture work for replay (1.4) */
};

/* How memory another process (or another API) shares is named (1.3, mem_import). */
enum kiln_mem_handle_type {
  /* A file descriptor whose pages are host memory (memfd_create, shm_open, a regular file),
   * mapped shared: every process mapping it sees the same bytes. For devices that address
   * host memory. The caller keeps the descriptor and may close it after mem_import returns. */
  KILN_MEM_HANDLE_POSIX_FD = 1,
  /* A CUDA IPC memory handle (cuIpcGetMemHandle in another process; 64 bytes) of memory on
   * this device. */
  KILN_MEM_HANDLE_CUDA_IPC = 2
};

typedef struct kiln_mem_import_desc {
  size_t struct_size;
  uint32_t handle_type; /* kiln_mem_handle_type */
  int32_t fd;           /* KILN_MEM_HANDLE_POSIX_FD */
  const void* handle;   /* KILN_MEM_HANDLE_CUDA_IPC: the handle's bytes */
  uint64_t handle_size;
  uint64_t offset; /* bytes from the start of the shared memory to the part imported */
  uint64_t bytes;  /* the part's size, more than 0 */
} kiln_mem_import_desc;

typedef struct kiln_plugin_attributes {
  size_t struct_size;
  const char* name; /* e.g. "cpp_openmp" */
  const char* vendor;
  const char* version;              /* the plugin's own version */
  const char* kir_versions;         /* comma-separated, e.g. "kir/1" */
  const char* artifact_format;      /* e.g. "elf-shared-object", "ptx", "hsaco" */
  const char* compiler_fingerprint; /* changes whenever generated code may change */
  uint32_t thread_safety;           /* kiln_thread_safety_flags */
} kiln_plugin_attributes;

typedef enum kiln_property_type {
  KILN_PROPERTY_INT = 0,
  KILN_PROPERTY_FLOAT = 1,
  KILN_PROPERTY_STRING = 2,
  KILN_PROPERTY_BOOL = 3
} kiln_property_type;

/* Well-known keys: kind ("cpu", "gpu"), name, arch, memory_bytes, compute_units,
 * warp_width, shared_memory_bytes, bandwidth_gbps, peak_gflops_f32. Plugins may add more. */
typedef struct kiln_property {
  size_t struct_size;
  const char* key;
  kiln_property_type type;
  int64_t int_value;        /* INT and BOOL */
  double float_value;       /* FLOAT */
  const char* string_value; /* STRING */
} kiln_property;

typedef struct kiln_device_info {
  size_t struct_size;
  const char* kind; /* "cpu", "cuda", "rocm", ...: the prefix of device names in configs */
  const char* name; /* human-readable */
  const kiln_property* properties;
  size_t num_properties;
} kiln_device_info;

typedef struct kiln_memory_stats {
  size_t struct_size;
  uint64_t bytes_in_use;
  uint64_t peak_bytes_in_use;
  uint64_t bytes_limit;     /* 0 when unknown */
  uint64_t num_allocations; /* live now: allocations made and not yet freed */
} kiln_memory_stats;

/* ---- compile and launch ----------------------------------------------------------- */

typedef struct kiln_compile_args {
  size_t struct_size;
  uint32_t device;
  const char* kir_text; /* canonical kir/1 text of one kernel or a batch of kernels */
  size_t kir_size;
  const char* config; /* a tuning config: one line of "key=value" pairs, or "" */
} kiln_compile_args;

typedef enum kiln_scalar_type { KILN_SCALAR_INT = 0, KILN_SCALAR_FLOAT = 1 } kiln_scalar_type;

typedef struct kiln_scalar {
  size_t struct_size;
  kiln_scalar_type type;
  int64_t int_value;
  double float_value;
} kiln_scalar;

typedef struct kiln_launch_args {
  size_t struct_size;
  const char* kernel;      /* name of the kernel inside the executable */
  const uint64_t* buffers; /* device addresses, in the kernel's parameter order */
  size_t num_buffers;
  const kiln_scalar* scalars;
  size_t num_scalars;
  kiln_stream* stream; /* NULL: the device's default stream */
} kiln_launch_args;

/* ---- the table -------------------------------------------------------------------- */

typedef struct kiln_plugin_api {
  size_t struct_size;
  uint32_t abi_major; /* the plugin's major */
  uint32_t abi_minor; /* the plugin's own minor; the host negotiates down */

  /* Errors (REQUIRED). */
  kiln_status (*error_code)(const kiln_error* error);
  const char* (*error_message)(const kiln_error* error); /* valid until error_destroy */
  void (*error_destroy)(kiln_error* error);

  /* Blobs (REQUIRED). */
  const void* (*blob_data)(const kiln_blob* blob);
  size_t (*blob_size)(const kiln_blob* blob);
  void (*blob_destroy)(kiln_blob* blob);

  /* Lifecycle (REQUIRED). */
  kiln_error* (*plugin_create)(const kiln_plugin_create_args* args, kiln_plugin** out);
  void (*plugin_destroy)(kiln_plugin* plugin);
  kiln_error* (*get_attributes)(kiln_plugin* plugin, kiln_plugin_attributes* out);

  /* Devices (REQUIRED). */
  kiln_error* (*device_count)(kiln_plugin* plugin, uint32_t* out);
  kiln_error* (*device_info)(kiln_plugin* plugin, uint32_t device, kiln_device_info* out);

  /* Code. supports() sets *supported to 0 or 1 and, when 0, may return a reason blob
   * (UTF-8 text). tuning_space() returns text: one config per line, "key=value" pairs
   * separated by spaces; the first line is the plugin's heuristic default. A line with the
   * pair "exact=0" may change numerics against the default (summation order, say); the core
   * drops that pair before compile() and skips such lines when tuning deterministically.
   * compile()
   * returns the artifact bytes the core caches, and metadata as JSON text. */
  kiln_error* (*supports)(kiln_plugin* plugin, uint32_t device, const char* kir_text,
                          size_t kir_size, int* supported, kiln_blob** reason);
  kiln_error* (*tuning_space)(kiln_plugin* plugin, uint32_t device, const char* kir_text,
                              size_t kir_size, kiln_blob** space);
  kiln_error* (*compile)(kiln_plugin* plugin, const kiln_compile_args* args, kiln_blob** artifact,
                         kiln_blob** metadata);
  kiln_error* (*load)(kiln_plugin* plugin, uint32_t device, const void* artifact,
                      size_t artifact_size, kiln_executable** out);
  void (*executable_destroy)(kiln_executable* executable);
  /* launch (and extern_call) run in order on the device's default stream and may return
   * before the work is done. An error a kernel reports (an index out of range) fails, naming
   * the kernel, the next call that waits for the device: copy_device_to_host,
   * copy_device_to_device, stream_synchronize or event_synchronize. */
  kiln_error* (*launch)(kiln_executable* executable, const kiln_launch_args* args);

  /* Memory. */
  kiln_error* (*mem_alloc)(kiln_plugin* plugin, uint32_t device, uint64_t bytes, uint64_t alignment,
                           uint64_t* address);
  kiln_error* (*mem_free)(kiln_plugin* plugin, uint32_t device, uint64_t address);
  kiln_error* (*copy_host_to_device)(kiln_plugin* plugin, uint32_t device, kiln_stream* stream,
                                     uint64_t dst, const void* src, uint64_t bytes);
  kiln_error* (*copy_device_to_host)(kiln_plugin* plugin, uint32_t device, kiln_stream* stream,
                                     void* dst, uint64_t src, uint64_t bytes);
  kiln_error* (*copy_device_to_device)(kiln_plugin* plugin, uint32_t device, kiln_stream* stream,
                                       uint64_t dst, uint64_t src, uint64_t bytes);
  kiln_error* (*memory_stats)(kiln_plugin* plugin, uint32_t device, kiln_memory_stats* out);

  /* Streams and events, for ordering and timing. */
  kiln_error* (*stream_create)(kiln_plugin* plugin, uint32_t device, kiln_stream** out);
  void (*stream_destroy)(kiln_stream* stream);
  kiln_error* (*stream_synchronize)(kiln_stream* stream);
  kiln_error* (*event_create)(kiln_plugin* plugin, uint32_t device, kiln_event** out);
  void (*event_destroy)(kiln_event* event);
  kiln_error* (*event_record)(kiln_event* event, kiln_stream* stream);
  kiln_error* (*event_synchronize)(kiln_event* event);
  kiln_error* (*event_elapsed_ms)(const kiln_event* start, const kiln_event* end,
                                  double* milliseconds);

  /* Externs (optional): named library calls such as "mm" or "bmm". extern_names returns
   * newline-separated names. extern_call takes the same argument struct as launch, with
   * args->kernel naming the extern. */
  kiln_error* (*extern_names)(kiln_plugin* plugin, kiln_blob** names);
  kiln_error* (*extern_call)(kiln_plugin* plugin, uint32_t device, const kiln_launch_args* args);

  /* ---- ABI 1.1 ---- */
  /* Memory the host's caller owns on the device (a framework's tensor: a host pointer on a
   * CPU device; a device pointer in the device's primary context on a GPU), usable as launch
   * and copy addresses from mem_register until mem_unregister with the same address and size.
   * The plugin never frees it. Registrations may overlap and repeat; each is undone once.
   * Optional: without them the host copies such tensors to and from memory it allocated. */
  kiln_error* (*mem_register)(kiln_plugin* plugin, uint32_t device, uint64_t address,
                              uint64_t bytes);
  kiln_error* (*mem_unregister)(kiln_plugin* plugin, uint32_t device, uint64_t address,
                                uint64_t bytes);

  /* ---- ABI 1.2 ---- */
  /* The device's kiln_capability_flags. Without this function a device has none. */
  kiln_error* (*device_capabilities)(kiln_plugin* plugin, uint32_t device, uint64_t* flags);
  /* Work given `stream` after this call waits for the work issued before `event` was last
   * recorded (on any stream of the same device). An event never recorded is INVALID_ARGUMENT. */
  kiln_error* (*stream_wait_event)(kiln_stream* stream, kiln_event* event);
  /* *done = 1 when the work issued before the event's last record has finished, else 0.
   * Never blocks: an error a kernel reported fails the next call that waits. An event never
   * recorded is INVALID_ARGUMENT. */
  kiln_error* (*event_query)(kiln_event* event, int* done);
  /* Host memory of `bytes` (at least 64-byte aligned) that the device's copies read and write
   * without staging (page-locked on a GPU), until host_free. A plugin without such memory
   * leaves both NULL or returns UNSUPPORTED. host_free of a pointer host_alloc did not
   * return, or returned and was freed, is INVALID_ARGUMENT. */
  kiln_error* (*host_alloc)(kiln_plugin* plugin, uint32_t device, uint64_t bytes, void** out);
  kiln_error* (*host_free)(kiln_plugin* plugin, uint32_t device, void* pointer);

  /* ---- ABI 1.3 ---- */
  /* Memory another process shares, usable as launch and copy addresses from here until
   * mem_release_import: *address is where desc->offset lies. The plugin never frees the
   * memory itself; the exporter keeps it alive until mem_release_import returns. A handle
   * type the device does not import (its KILN_CAPABILITY_IMPORT_* flags say which it does) is
   * UNSUPPORTED; a handle, offset or size that names no memory is INVALID_ARGUMENT. Imports
   * are not counted by memory_stats; plugin_destroy releases those still imported. */
  kiln_error* (*mem_import)(kiln_plugin* plugin, uint32_t device, const kiln_mem_import_desc* desc,
                            uint64_t* address);
  /* An address mem_import returned and not yet released; anything else is INVALID_ARGUMENT. */
  kiln_error* (*mem_release_import)(kiln_plugin* plugin, uint32_t device, uint64_t address);

  /* ---- ABI 1.4 ---- */
  /* Starts recording the work given `stream` (the capture rule above). A stream already
   * capturing, or the NULL stream, is INVALID_ARGUMENT; a device that cannot record now is
   * UNSUPPORTED. */
  kiln_error* (*stream_begin_capture)(kiln_stream* stream);
  /* Ends the capture and returns what it recorded, ready to replay. A stream not capturing is
   * INVALID_ARGUMENT; after any error the stream no longer captures and nothing is returned. */
  kiln_error* (*stream_end_capture)(kiln_stream* stream, kiln_graph** out);
  /* Queues the graph's work on `stream` (NULL: the device's default stream), on the device
   * it was captured on (a stream of another device is INVALID_ARGUMENT). May return before
   * the work is done, as a launch does. */
  kiln_error* (*graph_launch)(kiln_graph* graph, kiln_stream* stream);
  /* Frees the graph; replays already queued still run. */
  void (*graph_destroy)(kiln_graph* graph);
} kiln_plugin_api;

/* The one exported symbol. Returns the plugin's table (static storage), or NULL when the
 * plugin cannot serve this host at all. The host then checks abi_major itself. */
typedef const kiln_plugin_api* (*kiln_plugin_get_api_fn)(uint32_t host_abi_major,
                                                         uint32_t host_abi_minor);
#define KILN_PLUGIN_ENTRY_POINT "kiln_plugin_get_api"

KILN_PLUGIN_EXPORT const kiln_plugin_api* kiln_plugin_get_api(uint32_t host_abi_major,
                                                              uint32_t host_abi_minor);

#ifdef __cplusplus
}
#endif

#endif /* KILN_PLUGIN_H */
