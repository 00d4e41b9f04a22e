// The native launch of a cached CUDA plan (harness/launch/native.py builds this file on request):
// a warm call of reduce_sum without the two costs Python cannot cut. experiments/call_profile
// measured a cached call at float32 2^10 on an H100 as 6.7 us of launch (cuLaunchKernel through a
// Python binding) and 4.3 us of result allocation (Tensor.new_empty) out of about 15 us, against
// torch.sum's 11.5 us, which does both in C++. Here both are C++ too: at::empty for the 0-d result
// (the same caching allocator, on the same device and current stream, as new_empty) and
// cuLaunchKernel called directly, found in the driver library with dlsym (no CUDA toolkit header
// or library is needed to build this: the few driver types are declared below).
//
// What is launched is exactly what the Python launch modes launch (harness/launch/rebind.py): the
// same CUfunction (CuPy's loaded kernel, or Triton's compiled one), grid, block, dynamic shared
// memory, stream and parameters, so the sum is the same, bit for bit. The parameters are fixed when the plan is bound
// (the workspace's pointers, n) except the input and output pointers, which each call writes into
// its own copy on the C++ stack: no state is shared between calls, so no lock (the Python modes
// need one around their packed array).
#include <torch/extension.h>

#include <dlfcn.h>

#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// The driver API's types and the two entry points used (cuda.h's declarations).
using CUresult = int;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using LaunchKernel = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                  unsigned, unsigned, CUstream, void**, void**);
using GetErrorString = CUresult (*)(CUresult, const char**);

constexpr size_t kMaxParams = 16;  // the kernels launched here take at most 9

struct Driver {
    LaunchKernel launch = nullptr;
    GetErrorString error_string = nullptr;
};

const Driver& driver() {
    static const Driver d = [] {
        Driver out;
        // The driver library is already loaded (torch and CuPy opened it): RTLD_NOLOAD finds it.
        void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
        if (lib == nullptr) lib = dlopen("libcuda.so.1", RTLD_NOW);
        if (lib == nullptr) throw std::runtime_error("native launch: libcuda.so.1 not found");
        // cuLaunchKernel is not versioned by the per-thread default stream (the stream is explicit).
        out.launch = reinterpret_cast<LaunchKernel>(dlsym(lib, "cuLaunchKernel"));
        out.error_string = reinterpret_cast<GetErrorString>(dlsym(lib, "cuGetErrorString"));
        if (out.launch == nullptr) throw std::runtime_error("native launch: no cuLaunchKernel");
        return out;
    }();
    return d;
}

// One step of a cached launch: a kernel and its fixed parameters; per call the input's pointer
// (plus a byte offset: Triton's fastest kernel also takes the input past its unaligned head) is
// written into each slot of x_slots and the output's into out_slot (-1: none). Every parameter is
// held in 8 bytes (a 4-byte one in the low half: the driver reads as many bytes as the kernel's
// parameter has, and the host is little-endian).
struct Step {
    CUfunction function;
    unsigned grid, block, shared;
    std::vector<uint64_t> params;
    std::vector<size_t> x_slots;
    std::vector<uint64_t> x_offsets;
    int64_t out_slot;
};

// A cached launch: its steps (one kernel, or a family's passes) launched in order on one stream.
// Several steps share the workspace between them (the first's partials are the next's input), so
// a call holds the lock over all of them: two threads' calls must not interleave their steps.
class Launch {
  public:
    Launch(int64_t stream, at::Tensor proto)
        : stream_(reinterpret_cast<CUstream>(stream)), options_(proto.options()) {
        driver();  // fail here, when the plan is bound, not on the first call
    }

    void add(int64_t function, int64_t grid, int64_t block, int64_t shared_bytes,
             std::vector<int64_t> params, std::vector<int64_t> x_slots,
             std::vector<int64_t> x_offsets, int64_t out_slot) {
        const auto count = static_cast<int64_t>(params.size());
        bool ok = count <= static_cast<int64_t>(kMaxParams) && out_slot >= -1 &&
                  out_slot < count && x_slots.size() == x_offsets.size();
        for (int64_t slot : x_slots) ok = ok && slot >= 0 && slot < count;
        if (!ok) throw std::invalid_argument("native launch: bad parameter layout");
        steps_.push_back(Step{reinterpret_cast<CUfunction>(function),
                              static_cast<unsigned>(grid), static_cast<unsigned>(block),
                              static_cast<unsigned>(shared_bytes),
                              std::vector<uint64_t>(params.begin(), params.end()),
                              std::vector<size_t>(x_slots.begin(), x_slots.end()),
                              std::vector<uint64_t>(x_offsets.begin(), x_offsets.end()), out_slot});
    }

    // The launches into out (the caller's, already checked), returning it.
    at::Tensor into(const at::Tensor& x, const at::Tensor& out) const {
        const uint64_t base = reinterpret_cast<uint64_t>(x.data_ptr());
        std::unique_lock<std::mutex> hold(lock_, std::defer_lock);
        if (steps_.size() > 1) hold.lock();
        for (const Step& step : steps_) {
            uint64_t values[kMaxParams];
            void* pointers[kMaxParams];
            for (size_t i = 0; i < step.params.size(); ++i) {
                values[i] = step.params[i];
                pointers[i] = &values[i];
            }
            for (size_t i = 0; i < step.x_slots.size(); ++i)
                values[step.x_slots[i]] = base + step.x_offsets[i];
            if (step.out_slot >= 0)
                values[step.out_slot] = reinterpret_cast<uint64_t>(out.data_ptr());
            const CUresult err = driver().launch(step.function, step.grid, 1, 1, step.block, 1, 1,
                                                 step.shared, stream_, pointers, nullptr);
            if (err != 0) throw std::runtime_error("cuLaunchKernel failed: " + describe(err));
        }
        return out;
    }

    // A new 0-d result of the sum's dtype on x's device, then the launches into it.
    at::Tensor call(const at::Tensor& x) const { return into(x, at::empty({}, options_)); }

  private:
    static std::string describe(CUresult err) {
        const char* text = nullptr;
        if (driver().error_string != nullptr) driver().error_string(err, &text);
        return std::to_string(err) + (text != nullptr ? std::string(" (") + text + ")" : "");
    }

    CUstream stream_;
    at::TensorOptions options_;
    std::vector<Step> steps_;
    mutable std::mutex lock_;
};

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    pybind11::class_<Launch>(m, "Launch")
        .def(pybind11::init<int64_t, at::Tensor>())
        .def("add", &Launch::add)
        .def("call", &Launch::call)
        .def("into", &Launch::into);
}
