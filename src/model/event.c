/* event.c - names and properties of the event kinds (Paddle's type names). */
#include "proftop/event.h"

static const char *const kind_names[PT_KIND__COUNT] = {
	[PT_KIND_PROFILE_STEP] = "ProfileStep",
	[PT_KIND_DATALOADER] = "Dataloader",
	[PT_KIND_FORWARD] = "Forward",
	[PT_KIND_BACKWARD] = "Backward",
	[PT_KIND_OPTIMIZATION] = "Optimization",
	[PT_KIND_OPERATOR] = "Operator",
	[PT_KIND_OPERATOR_INNER] = "OperatorInner",
	[PT_KIND_USER_DEFINED] = "UserDefined",
	[PT_KIND_PYTHON] = "PythonOp",
	[PT_KIND_CUDA_RUNTIME] = "CudaRuntime",
	[PT_KIND_KERNEL] = "Kernel",
	[PT_KIND_MEMCPY] = "Memcpy",
	[PT_KIND_MEMSET] = "Memset",
	[PT_KIND_COMMUNICATION] = "Communication",
	[PT_KIND_INSTANT] = "Instant",
	[PT_KIND_COUNTER] = "Counter",
	[PT_KIND_OTHER] = "Other",
};

const char *pt_kind_name(enum pt_kind kind)
{
	if ((unsigned)kind >= PT_KIND__COUNT)
		return "Other";
	return kind_names[kind];
}

