#include "plugins/cpp_openmp/onednn_library.h"

#include <oneapi/dnnl/dnnl.h>

#include <cstddef>
#include <map>
#include <stdexcept>
#include <utility>

#include "plugins/kir_support/dynamic_library.h"

namespace kiln::cpu {
namespace {

using kir_support::ConvDirection;

dnnl_data_type_t data_type(kir::DType d) {
  switch (d) {
    case kir::DType::F32:
      return dnnl_f32;
    case kir::DType::F16:
      return dnnl_f16;
    case kir::DType::BF16:
      return dnnl_bf16;
    default:
      throw std::runtime_error(std::string("oneDNN: no ") + kir::dtype_name(d) + " convolution");
  }
}

// The parameters a plan is made for: every one but the offset.
std::vector<int64_t> plan_key(const kir_support::ConvCall& c) {
  return {static_cast<int64_t>(c.dtype),
          c.n,
          c.c,
          c.h,
          c.w,
          c.k,
          c.r,
          c.s,
          c.out_h,
          c.out_w,
          c.stride_h,
          c.stride_w,
          c.pad_h,
          c.pad_w,
          c.dil_h,
          c.dil_w,
          c.groups,
          c.x_stride[0],
          c.x_stride[1],
          c.x_stride[2],
          c.x_stride[3]};
}

}  // namespace

struct OnednnLibrary::State {
  // A reorder between the caller's layout and the one the convolution chose.
  struct Reorder {
    dnnl_primitive_t primitive = nullptr;
    size_t bytes = 0;  // the copy in the convolution's layout (blocked layouts pad channels)
  };
  // One direction of one convolution shape: operands a and b in, `out` written, each in the
  // caller's layout and in the primitive's (reordered between where they differ).
  struct Plan {
    explicit Plan(const State& s) : owner(s) {}
    Plan(const Plan&) = delete;
    Plan& operator=(const Plan&) = delete;
    ~Plan() {
      for (dnnl_primitive_t q : {conv, in[0].primitive, in[1].primitive, out.primitive})
        if (q) owner.primitive_destroy(q);
    }
    const State& owner;
    std::mutex run;  // one execution at a time: a primitive's scratchpad is its own
    dnnl_primitive_t conv = nullptr;
    int args[3] = {};                          // the primitive's argument ids of a, b, out
    dnnl_memory_desc_t user[3]{}, inner[3]{};  // a, b, out: the caller's and the primitive's
    Reorder in[2], out;                        // primitive null: no reorder
    std::string impl;
  };

  kir_support::DynamicLibrary library;
  decltype(&dnnl_engine_create) engine_create = nullptr;
  decltype(&dnnl_engine_destroy) engine_destroy = nullptr;
  decltype(&dnnl_stream_create) stream_create = nullptr;
  decltype(&dnnl_stream_wait) stream_wait = nullptr;
  decltype(&dnnl_stream_destroy) stream_destroy = nullptr;
  decltype(&dnnl_memory_desc_init_by_strides) md_by_strides = nullptr;
  decltype(&dnnl_memory_desc_init_by_tag) md_by_tag = nullptr;
  decltype(&dnnl_memory_desc_equal) md_equal = nullptr;
  decltype(&dnnl_memory_desc_get_size) md_size = nullptr;
  decltype(&dnnl_dilated_convolution_forward_desc_init) conv_init = nullptr;
  decltype(&dnnl_dilated_convolution_backward_data_desc_init) conv_data_init = nullptr;
  decltype(&dnnl_dilated_convolution_backward_weights_desc_init) conv_weights_init = nullptr;
  decltype(&dnnl_primitive_desc_create) pd_create = nullptr;
  decltype(&dnnl_reorder_primitive_desc_create) reorder_pd_create = nullptr;
  decltype(&dnnl_primitive_desc_query) pd_query = nullptr;
  decltype(&dnnl_primitive_desc_query_md) pd_query_md = nullptr;
  decltype(&dnnl_primitive_desc_destroy) pd_destroy = nullptr;
  decltype(&dnnl_primitive_create) primitive_create = nullptr;
  decltype(&dnnl_primitive_execute) primitive_execute = nullptr;
  decltype(&dnnl_primitive_destroy) primitive_destroy = nullptr;
  decltype(&dnnl_memory_create) memory_create = nullptr;
  decltype(&dnnl_memory_destroy) memory_destroy = nullptr;

  dnnl_engine_t engine = nullptr;
  std::vector<kir::DType> dtypes[3];  // offered, per direction
  std::mutex mutex;                   // plans
  std::map<std::vector<int64_t>, std::unique_ptr<Plan>> plans;

  bool bind(const kir_support::DynamicLibrary& l) {
    return l.symbol("dnnl_engine_create", engine_create) &&
           l.symbol("dnnl_engine_destroy", engine_destroy) &&
           l.symbol("dnnl_stream_create", stream_create) &&
           l.symbol("dnnl_stream_wait", stream_wait) &&
           l.symbol("dnnl_stream_destroy", stream_destroy) &&
           l.symbol("dnnl_memory_desc_init_by_strides", md_by_strides) &&
           l.symbol("dnnl_memory_desc_init_by_tag", md_by_tag) &&
           l.symbol("dnnl_memory_desc_equal", md_equal) &&
           l.symbol("dnnl_memory_desc_get_size", md_size) &&
           l.symbol("dnnl_dilated_convolution_forward_desc_init", conv_init) &&
           l.symbol("dnnl_dilated_convolution_backward_data_desc_init", conv_data_init) &&
           l.symbol("dnnl_dilated_convolution_backward_weights_desc_init", conv_weights_init) &&
           l.symbol("dnnl_primitive_desc_create", pd_create) &&
           l.symbol("dnnl_reorder_primitive_desc_create", reorder_pd_create) &&
           l.symbol("dnnl_primitive_desc_query", pd_query) &&
           l.symbol("dnnl_primitive_desc_query_md", pd_query_md) &&
           l.symbol("dnnl_primitive_desc_destroy", pd_destroy) &&
           l.symbol("dnnl_primitive_create", primitive_create) &&
           l.symbol("dnnl_primitive_execute", primitive_execute) &&
           l.symbol("dnnl_primitive_destroy", primitive_destroy) &&
           l.symbol("dnnl_memory_create", memory_create) &&
           l.symbol("dnnl_memory_destroy", memory_destroy);
  }

  ~State() {
    plans.clear();  // before the engine they were made on
    if (engine) engine_destroy(engine);
  }

  static void check(dnnl_status_t s, const char* what) {
    if (s != dnnl_success)
      throw std::runtime_error(std::string("oneDNN: ") + what + " failed (status " +
                               std::to_string(static_cast<int>(s)) + ")");
  }

  // A primitive from `pd` (which it then destroys), and its implementation's name.
  dnnl_primitive_t make_primitive(dnnl_primitive_desc_t pd, std::string* impl = nullptr) const {
    dnnl_primitive_t p = nullptr;
    if (impl) {
      const char* name = nullptr;
      if (pd_query(pd, dnnl_query_impl_info_str, 0, &name) == dnnl_success && name) *impl = name;
    }
    const dnnl_status_t s = primitive_create(&p, pd);
    pd_destroy(pd);
    check(s, "creating a primitive");
    return p;
  }

  // A reorder from -> to, its copy sized for `inner` (the convolution's side of the two).
  Reorder reorder(const dnnl_memory_desc_t& from, const dnnl_memory_desc_t& to,
                  const dnnl_memory_desc_t& inner) const {
    Reorder r;
    if (md_equal(&from, &to)) return r;
    dnnl_primitive_desc_t pd = nullptr;
    check(reorder_pd_create(&pd, &from, engine, &to, engine, nullptr), "creating a reorder");
    r.primitive = make_primitive(pd);
    r.bytes = md_size(&inner);
    return r;
  }

  // A primitive descriptor for `direction` over x, w, y (or "any" layouts), with the forward
  // one a backward primitive needs as its hint.
  dnnl_primitive_desc_t describe(const kir_support::ConvCall& c, ConvDirection direction,
                                 const dnnl_memory_desc_t& x, const dnnl_memory_desc_t& w,
                                 const dnnl_memory_desc_t& y) const {
    const dnnl_dims_t strides = {c.stride_h, c.stride_w};
    // oneDNN counts dilation from 0 (none) and takes the right/bottom padding on its own.
    const dnnl_dims_t dilates = {c.dil_h - 1, c.dil_w - 1};
    const dnnl_dims_t pad = {c.pad_h, c.pad_w};
    dnnl_convolution_desc_t desc;
    const dnnl_prop_kind_t forward_kind =
        direction == ConvDirection::Forward ? dnnl_forward_inference : dnnl_forward_training;
    check(conv_init(&desc, forward_kind, dnnl_convolution_direct, &x, &w, nullptr, &y, strides,
                    dilates, pad, pad),
          "describing the convolution");
    dnnl_primitive_desc_t forward = nullptr;
    check(pd_create(&forward, &desc, nullptr, engine, nullptr), "choosing a convolution");
    if (direction == ConvDirection::Forward) return forward;
    dnnl_convolution_desc_t backward;
    dnnl_status_t s = direction == ConvDirection::BackwardInput
                          ? conv_data_init(&backward, dnnl_convolution_direct, &x, &w, &y, strides,
                                           dilates, pad, pad)
                          : conv_weights_init(&backward, dnnl_convolution_direct, &x, &w, nullptr,
                                              &y, strides, dilates, pad, pad);
    dnnl_primitive_desc_t pd = nullptr;
    if (s == dnnl_success) s = pd_create(&pd, &backward, nullptr, engine, forward);
    pd_destroy(forward);
    check(s, "choosing a backward convolution");
    return pd;
  }

  // The convolution in `direction` with the caller's layouts for x and y (`any_layout`
  // false) or with layouts the library picks (reordered to and from the caller's).
  std::unique_ptr<Plan> make_plan(const kir_support::ConvCall& c, ConvDirection direction,
                                  bool any_layout) const {
    auto plan = std::make_unique<Plan>(*this);
    const dnnl_data_type_t dt = data_type(c.dtype);
    const dnnl_dims_t x_dims = {c.n, c.c, c.h, c.w};
    const dnnl_dims_t x_strides = {c.x_stride[0], c.x_stride[1], c.x_stride[2], c.x_stride[3]};
    dnnl_memory_desc_t x{}, w{}, y{};
    check(md_by_strides(&x, 4, x_dims, dt, x_strides), "describing x");
    const dnnl_dims_t y_dims = {c.n, c.k, c.out_h, c.out_w};
    check(md_by_tag(&y, 4, y_dims, dt, dnnl_nchw), "describing y");
    if (c.groups == 1) {
      const dnnl_dims_t w_dims = {c.k, c.c, c.r, c.s};
      check(md_by_tag(&w, 4, w_dims, dt, dnnl_oihw), "describing the weight");
    } else {
      const dnnl_dims_t w_dims = {c.groups, c.k / c.groups, c.c / c.groups, c.r, c.s};
      check(md_by_tag(&w, 5, w_dims, dt, dnnl_goihw), "describing the weight");
    }
    dnnl_memory_desc_t x_any = x, y_any = y, w_any{};
    if (any_layout) {
      check(md_by_tag(&x_any, 4, x_dims, dt, dnnl_format_tag_any), "describing x");
      check(md_by_tag(&y_any, 4, y_dims, dt, dnnl_format_tag_any), "describing y");
    }
    check(md_by_tag(&w_any, w.ndims, w.dims, dt, dnnl_format_tag_any), "describing the weight");
    dnnl_primitive_desc_t pd = describe(c, direction, x_any, w_any, y_any);
    // Per direction: which of x, w, y are a, b and out, and their argument ids and queries.
    struct Role {
      const dnnl_memory_desc_t* user;
      int arg;
      dnnl_query_t query;
    };
    Role roles[3];
    switch (direction) {
      case ConvDirection::Forward:
        roles[0] = {&x, DNNL_ARG_SRC, dnnl_query_src_md};
        roles[1] = {&w, DNNL_ARG_WEIGHTS, dnnl_query_weights_md};
        roles[2] = {&y, DNNL_ARG_DST, dnnl_query_dst_md};
        break;
      case ConvDirection::BackwardInput:
        roles[0] = {&y, DNNL_ARG_DIFF_DST, dnnl_query_diff_dst_md};
        roles[1] = {&w, DNNL_ARG_WEIGHTS, dnnl_query_weights_md};
        roles[2] = {&x, DNNL_ARG_DIFF_SRC, dnnl_query_diff_src_md};
        break;
      case ConvDirection::BackwardWeight:
        roles[0] = {&x, DNNL_ARG_SRC, dnnl_query_src_md};
        roles[1] = {&y, DNNL_ARG_DIFF_DST, dnnl_query_diff_dst_md};
        roles[2] = {&w, DNNL_ARG_DIFF_WEIGHTS, dnnl_query_diff_weights_md};
        break;
    }
    for (int i = 0; i < 3; ++i) {
      plan->user[i] = *roles[i].user;
      plan->inner[i] = *pd_query_md(pd, roles[i].query, 0);
      plan->args[i] = roles[i].arg;
    }
    plan->conv = make_primitive(pd, &plan->impl);
    plan->in[0] = reorder(plan->user[0], plan->inner[0], plan->inner[0]);
    plan->in[1] = reorder(plan->user[1], plan->inner[1], plan->inner[1]);
    plan->out = reorder(plan->inner[2], plan->user[2], plan->inner[2]);
    return plan;
  }

  // The caller's layouts where a direct (jit) implementation takes them, else the layouts
  // oneDNN picks when that gets a direct one (its blocked layouts plus reorders beat an
  // im2col gemm on the caller's: measured 1.7 against 1.3 ms for ResNet's 3x3 at batch 1, 7x
  // for a depthwise one), else the caller's unless only the reference loop takes them.
  std::unique_ptr<Plan> best_plan(const kir_support::ConvCall& c, ConvDirection direction) const {
    const auto direct = [](const Plan& p) {
      return p.impl.rfind("ref", 0) != 0 && p.impl.find("gemm") == std::string::npos;
    };
    auto plan = make_plan(c, direction, false);
    if (direct(*plan)) return plan;
    auto any = make_plan(c, direction, true);
    if (direct(*any) || plan->impl.rfind("ref", 0) == 0) return any;
    return plan;
  }

  Plan& plan_for(const kir_support::ConvCall& c, ConvDirection direction) {
    std::lock_guard lock(mutex);
    std::vector<int64_t> key = plan_key(c);
    key.push_back(static_cast<int64_t>(direction));
    auto it = plans.find(key);
    if (it == plans.end()) it = plans.emplace(key, best_plan(c, direction)).first;
    return *it->second;
  }

  // Runs `p` with its arguments (memory objects over the given addresses).
  void execute(dnnl_stream_t stream, dnnl_primitive_t p,
               std::initializer_list<std::pair<int, std::pair<const dnnl_memory_desc_t*, void*>>>
                   args) const {
    std::vector<dnnl_exec_arg_t> exec;
    std::vector<dnnl_memory_t> memories;
    dnnl_status_t s = dnnl_success;
    for (const auto& [arg, md_handle] : args) {
      dnnl_memory_t m = nullptr;
      s = memory_create(&m, md_handle.first, engine, md_handle.second);
      if (s != dnnl_success) break;
      memories.push_back(m);
      exec.push_back({arg, m});
    }
    if (s == dnnl_success)
      s = primitive_execute(p, stream, static_cast<int>(exec.size()), exec.data());
    if (s == dnnl_success) s = stream_wait(stream);
    for (dnnl_memory_t m : memories) memory_destroy(m);
    check(s, "running a primitive");
  }
};

OnednnLibrary::OnednnLibrary() = default;
OnednnLibrary::OnednnLibrary(OnednnLibrary&& other) noexcept = default;
OnednnLibrary& OnednnLibrary::operator=(OnednnLibrary&& other) noexcept = default;
OnednnLibrary::~OnednnLibrary() = default;

OnednnLibrary OnednnLibrary::open(const std::string& path, std::string& why) {
  OnednnLibrary lib;
  if (path == "off") {
    why = "turned off by the plugin's onednn option";
    return lib;
  }
#if defined(__SANITIZE_ADDRESS__)
  // LeakSanitizer's scan of the threads crashes (signal 11 in its tracer) once oneDNN has run
  // a convolution; with leak checks off the same tests pass under AddressSanitizer.
  why = "not in an AddressSanitizer build (LeakSanitizer's thread scan crashes on oneDNN's)";
  return lib;
#endif
  auto state = std::make_unique<State>();
  state->library = kir_support::DynamicLibrary::open(
      path.empty() ? std::vector<std::string>{"libdnnl.so.2"} : std::vector<std::string>{path},
      [&](const kir_support::DynamicLibrary& l) { return state->bind(l); }, why);
  if (!state->library.loaded()) return lib;
  if (state->engine_create(&state->engine, dnnl_cpu, 0) != dnnl_success) {
    why = "no oneDNN CPU engine";
    return lib;
  }
  // Half types only where an optimized implementation exists (the reference one is a scalar
  // loop slower than the generated kernel).
  for (const kir::DType d : {kir::DType::F32, kir::DType::BF16, kir::DType::F16}) {
    kir_support::ConvCall probe;
    probe.dtype = d;
    probe.n = 1, probe.c = 16, probe.h = 8, probe.w = 8, probe.k = 16, probe.r = 3, probe.s = 3;
    probe.out_h = 8, probe.out_w = 8, probe.pad_h = 1, probe.pad_w = 1;
    probe.x_stride[0] = 16 * 64, probe.x_stride[1] = 64, probe.x_stride[2] = 8;
    probe.x_stride[3] = 1;
    for (int direction = 0; direction < 3; ++direction) {
      try {
        State::Plan& plan = state->plan_for(probe, static_cast<ConvDirection>(direction));
        if (d == kir::DType::F32 || plan.impl.rfind("ref", 0) != 0)
          state->dtypes[direction].push_back(d);
      } catch (const std::runtime_error&) {
      }
    }
  }
  if (state->dtypes[0].empty()) {
    why = "oneDNN has no convolution on this CPU";
    return lib;
  }
  lib.state_ = std::move(state);
  return lib;
}

bool OnednnLibrary::available() const {
  return state_ != nullptr;
}

const std::string& OnednnLibrary::path() const {
  static const std::string none;
  return state_ ? state_->library.path() : none;
}

std::vector<std::string> OnednnLibrary::extern_lines() const {
  if (!state_) return {};
  std::vector<std::string> lines;
  for (int direction = 0; direction < 3; ++direction) {
    if (state_->dtypes[direction].empty()) continue;
    std::string line = kir_support::kConvExterns[direction];
    for (const kir::DType d : state_->dtypes[direction])
      line += std::string(" ") + kir::dtype_name(d);
    lines.push_back(line);
  }
  return lines;
}

void OnednnLibrary::run(ConvDirection direction, const kir_support::ConvCall& call,
                        const void* a_in, const void* b_in, void* out_in) {
  if (!state_) throw std::runtime_error("oneDNN is not loaded");
  State& s = *state_;
  State::Plan& plan = s.plan_for(call, direction);
  // x is read (or dx written) from the call's offset on.
  const int64_t x_offset = call.x_offset * kir::dtype_size(call.dtype);
  auto* a = const_cast<char*>(static_cast<const char*>(a_in));
  auto* b = const_cast<char*>(static_cast<const char*>(b_in));
  auto* out = static_cast<char*>(out_in);
  if (direction == ConvDirection::BackwardInput)
    out += x_offset;
  else
    a += x_offset;
  dnnl_stream_t stream = nullptr;
  State::check(s.stream_create(&stream, s.engine, dnnl_stream_default_flags), "creating a stream");
  struct StreamGuard {
    const State& s;
    dnnl_stream_t stream;
    ~StreamGuard() { s.stream_destroy(stream); }
  } guard{s, stream};
  std::lock_guard lock(plan.run);
  // Copies in the primitive's layouts where it chose others than the caller's.
  std::vector<std::byte> a_copy(plan.in[0].bytes), b_copy(plan.in[1].bytes),
      out_copy(plan.out.bytes);
  void* inner[3] = {a, b, out};
  std::vector<std::byte>* copies[2] = {&a_copy, &b_copy};
  void* user[2] = {a, b};
  for (int i = 0; i < 2; ++i) {
    if (!plan.in[i].primitive) continue;
    inner[i] = copies[i]->data();
    s.execute(
        stream, plan.in[i].primitive,
        {{DNNL_ARG_FROM, {&plan.user[i], user[i]}}, {DNNL_ARG_TO, {&plan.inner[i], inner[i]}}});
  }
  if (plan.out.primitive) inner[2] = out_copy.data();
  s.execute(stream, plan.conv,
            {{plan.args[0], {&plan.inner[0], inner[0]}},
             {plan.args[1], {&plan.inner[1], inner[1]}},
             {plan.args[2], {&plan.inner[2], inner[2]}}});
  if (plan.out.primitive)
    s.execute(stream, plan.out.primitive,
              {{DNNL_ARG_FROM, {&plan.inner[2], inner[2]}}, {DNNL_ARG_TO, {&plan.user[2], out}}});
}

}  // namespace kiln::cpu
